#!/usr/bin/env bash
# Heap per backend of the HTTP prober + scheduler, and bytes allocated per probe (issue 15's
# "heap per backend" target), with the class histogram that makes it up. One command from a clean
# clone (Java 17, Maven, python3):
#
#   bench/probe-heap.sh                      # N = 1000 and 5000, fresh connections, 3 runs each
#   NS=2000 RUNS=1 REUSE=reuse bench/probe-heap.sh
#
# Starts bench/harness/farm.py (its own process, N backends on 127.<FARM_OCTET>.x.y:8080), then
# runs dev.vigil.bench.ProbeHeap RUNS times per N (its own JVM, serial collector, one event loop,
# interval 1 s, timeout 1 s, jitter 10 %) and prints each run's figures (live heap after GC per
# backend, the former used-heap reading, bytes allocated per probe), the last run's class histogram
# growth per backend, and the medians. JAVA_OPTS="... -Dwarmup=false" counts what the first probes
# load once per process; "-Dalloc.profile=FILE" writes async-profiler's allocation stacks. Neither
# figure depends on CPU time, but probes in flight hold their connections (about 8 KB each): when
# a busy machine makes the farm fall behind and probes time out (the "passed" count), the heap
# figure counts them. The farm opens thousands of loopback connections: take
# /tmp/vigil-bench.lock on a shared machine.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH=$ROOT/bench/harness
. "$BENCH/lib.sh"
NS=${NS:-"1000 5000"}
RUNS=${RUNS:-3}
REUSE=${REUSE:-fresh}
WINDOW_S=${WINDOW_S:-10}
FARM_OCTET=${FARM_OCTET:-1}
CTL_PORT=${CTL_PORT:-19999}
OUT=${OUT:-/tmp/probe-heap}
JAVA_OPTS=${JAVA_OPTS:-"-XX:+UseSerialGC -Xms64m -Xmx512m"}
mkdir -p "$OUT"
require python3 || exit 1
classpath "$OUT" || exit 1
ulimit -n 20000 2>/dev/null || ulimit -n "$(ulimit -Hn)"

FARM=""
cleanup() { [ -n "$FARM" ] && kill $FARM 2>/dev/null; wait 2>/dev/null; }
trap cleanup EXIT INT TERM

for N in $NS; do
  farms_start "$N" "$OUT" "$FARM_OCTET" "$CTL_PORT" 900
  for R in $(seq "$RUNS"); do
    # shellcheck disable=SC2086
    timeout $((WINDOW_S + 120)) java $JAVA_OPTS -cp "$CP" dev.vigil.bench.ProbeHeap \
        "$OUT/backends-$N.txt" "$N" "$REUSE" "$WINDOW_S" >"$OUT/heap-$REUSE-$N-$R.txt" 2>&1
    head -1 "$OUT/heap-$REUSE-$N-$R.txt"
  done
  tail -n +2 "$OUT/heap-$REUSE-$N-$RUNS.txt"
  kill $FARM 2>/dev/null; wait $FARM 2>/dev/null; FARM=""
  python3 - "$OUT" "$REUSE" "$N" "$RUNS" <<'PY'
import re, statistics, sys
out, reuse, n, runs = sys.argv[1:]
live, used, alloc = [], [], []
for r in range(1, int(runs) + 1):
    first = open(f"{out}/heap-{reuse}-{n}-{r}.txt").readline()
    m = re.search(r"(-?[0-9]+) bytes of live heap per backend \((-?[0-9]+) used\).* ([0-9]+) bytes allocated per probe", first)
    if m:
        live.append(int(m.group(1))); used.append(int(m.group(2))); alloc.append(int(m.group(3)))
if live:
    med = statistics.median
    print(f"N={n} {reuse}: live heap per backend median {med(live):.0f} B {live}; "
          f"used (ProbeLoadRun's former reading) {med(used):.0f} B {used}; "
          f"allocated per probe {med(alloc):.0f} B {alloc}")
PY
done
