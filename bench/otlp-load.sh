#!/usr/bin/env bash
# The OTLP receiver's load run (issue 33), over TLS, next to the JSON intake's figure in the same
# run:
#   1. the JSON intake (dev.vigil.passive.OutcomeIntakeLoad): batches of 1,000 outcomes, outcomes/s
#      and the server event loop's CPU per outcome, median of ROUNDS;
#   2. OTLP/gRPC (dev.vigil.passive.OtlpIntakeLoad): exports of 1,000 Traefik access-log records
#      to the intake's port, authentication cached, one server event loop: records/s and loop CPU
#      per record, median of ROUNDS;
#   3. the overload: the server (dev.vigil.passive.OtlpOverloadServer, the default limits, Vert.x's
#      default event loops) in a JVM of its own with the chart's heap and flags (SERVER_JVM), the
#      client (OtlpOverloadClient) in another, 10x the exports in flight for OVERLOAD_S against
#      the default per-identity rate: the answers by gRPC status (RESOURCE_EXHAUSTED with RetryInfo
#      expected) and the server's series every SAMPLE_S seconds (live heap after a full GC, Netty's
#      allocator heap and direct memory, the JDK's direct buffers), its largest value per third of
#      the run (SERIES: levelled off when the last third is no larger than the second), and the
#      class histogram at the largest live heap after WARM_S.
#
#   bench/otlp-load.sh                                   # 100 backends, 3 rounds of 10 s
#   BACKENDS=100 ROUND_S=10 ROUNDS=3 IN_FLIGHT=8 WARMUP_S=15 HEAP=384m bench/otlp-load.sh
#   BACKENDS=10 ROUND_S=1 ROUNDS=1 WARMUP_S=1 OVERLOAD_S=12 WARM_S=4 NO_LOCK=1 bench/otlp-load.sh
#                                                        # a smoke, ~30 s
#   ONLY=overload RUNS=3 bench/otlp-load.sh              # the overload alone, 3 runs, medians
#   ONLY=overload RUNS=3 RECORDS=13000 OVERLOAD_IN_FLIGHT=8 bench/otlp-load.sh
#                                                        # admitted exports near the 4 MiB limit
#
# HEAP defaults to the chart's: 75 % (javaOptions) of the 512 Mi memory limit. SERVER_JVM is the
# chart's javaOptions as the JVM applies them in its 1-CPU, 512 Mi container: -Xmx384m (75 %),
# -XX:+ExitOnOutOfMemoryError, and -XX:ActiveProcessorCount=1 (so the JVM picks what it picks
# there: the serial collector, 2 event loops, and direct memory up to the heap's size). Takes
# /tmp/vigil-bench.lock while it measures (other engineers' builds pause), released on exit;
# NO_LOCK=1 skips it (smoke runs only: the figures then mean nothing).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BACKENDS=${BACKENDS:-100}
ROUND_S=${ROUND_S:-10}
ROUNDS=${ROUNDS:-3}
IN_FLIGHT=${IN_FLIGHT:-8}
WARMUP_S=${WARMUP_S:-15}
HEAP=${HEAP:-384m}
OVERLOAD_S=${OVERLOAD_S:-180}
SAMPLE_S=${SAMPLE_S:-5}
WARM_S=${WARM_S:-30}
RUNS=${RUNS:-1}
ONLY=${ONLY:-}
RECORDS=${RECORDS:-1000}                                # records per export in the overload run
OVERLOAD_IN_FLIGHT=${OVERLOAD_IN_FLIGHT:-$((IN_FLIGHT * 10))}
SERVER_JVM=${SERVER_JVM:-"-Xmx$HEAP -XX:+ExitOnOutOfMemoryError -XX:ActiveProcessorCount=1"}
OUT=${OUT:-/tmp/otlp-load}
mkdir -p "$OUT"
echo "building (test classes + classpath)" >&2
(cd "$ROOT" && mvn -B -q -pl operator test-compile dependency:build-classpath \
    -Dmdep.includeScope=test -Dmdep.outputFile="$OUT/cp.txt")
CP="$ROOT/operator/target/classes:$ROOT/operator/target/test-classes:$(cat "$OUT/cp.txt")"
if [ -z "${NO_LOCK:-}" ]; then
  until mkdir /tmp/vigil-bench.lock 2>/dev/null; do echo "waiting for /tmp/vigil-bench.lock" >&2; sleep 20; done
  trap 'rmdir /tmp/vigil-bench.lock' EXIT
fi
echo "loadavg before: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -z "$ONLY" ] || [ "$ONLY" = throughput ]; then
  timeout 1800 java "-Xmx$HEAP" -XX:+ExitOnOutOfMemoryError -cp "$CP" \
    dev.vigil.passive.OutcomeIntakeLoad "$BACKENDS" "$ROUND_S" "$ROUNDS" "$IN_FLIGHT" "$WARMUP_S" \
    | grep -v ' INFO ' | tee "$OUT/json.txt"
  timeout 1800 java "-Xmx$HEAP" -XX:+ExitOnOutOfMemoryError -cp "$CP" \
    dev.vigil.passive.OtlpIntakeLoad "$BACKENDS" "$ROUND_S" "$ROUNDS" "$IN_FLIGHT" "$WARMUP_S" \
    | grep -v ' INFO ' | tee "$OUT/otlp.txt"
fi
overload() { # $1: run number; the server's output in $OUT/server-$1.txt, the client's in client-$1.txt
  local srv="$OUT/server-$1.txt" cli="$OUT/client-$1.txt" port ca spid
  # shellcheck disable=SC2086
  timeout $((OVERLOAD_S + 120)) java $SERVER_JVM -cp "$CP" dev.vigil.passive.OtlpOverloadServer \
    "$BACKENDS" "$((OVERLOAD_S + 5))" "$SAMPLE_S" "$WARM_S" > "$srv" 2>&1 &
  spid=$!
  for _ in $(seq 1 120); do grep -q '^READY' "$srv" && break; sleep 0.5; done
  port=$(sed -n 's/^READY port=\([0-9]*\) .*/\1/p' "$srv")
  ca=$(sed -n 's/^READY .*ca=\([^ ]*\) .*/\1/p' "$srv")
  if [ -z "$port" ]; then echo "server did not start" >&2; kill "$spid" 2>/dev/null; cat "$srv" >&2; return 1; fi
  timeout $((OVERLOAD_S + 60)) java -Xmx1g -cp "$CP" dev.vigil.passive.OtlpOverloadClient \
    "$port" "$ca" "$BACKENDS" "$OVERLOAD_S" "$OVERLOAD_IN_FLIGHT" "$RECORDS" 2>&1 | grep -v ' INFO ' > "$cli"
  wait "$spid" || true
  grep -E '^(READY|SAMPLE|SERIES)' "$srv"
  sed -n '/^HISTOGRAM/,$p' "$srv" | head -32
  grep -E '^(OVERLOAD|  an export)' "$cli"
}
if [ -z "$ONLY" ] || [ "$ONLY" = overload ]; then
  for r in $(seq 1 "$RUNS"); do echo "overload run $r of $RUNS"; overload "$r" | tee "$OUT/overload-$r.txt"; done
fi
echo "loadavg after: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -z "$ONLY" ] || [ "$ONLY" = throughput ]; then
  echo "JSON: $(grep MEDIAN "$OUT/json.txt" | head -1)"
  echo "OTLP: $(grep 'OTLP MEDIAN' "$OUT/otlp.txt" | head -1)"
fi
if [ -z "$ONLY" ] || [ "$ONLY" = overload ]; then
  grep -h '^OVERLOAD' "$OUT"/overload-*.txt | sed 's/^/10x:  /'
  python3 - "$OUT" "$RUNS" <<'PY'
import re, statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
rows = []
for r in range(1, runs + 1):
    text = open(f"{out}/overload-{r}.txt").read()
    m = re.search(r"liveHeapMaxByThird=([\d.,]+)MiB nettyDirectMaxByThird=([\d.,]+)MiB jdkDirectMaxByThird=([\d.,]+)MiB", text)
    if m:
        rows.append([[float(x) for x in g.split(",")] for g in m.groups()])
if rows:
    med = lambda k, t: statistics.median(row[k][t] for row in rows)
    for k, name in enumerate(["live heap", "Netty direct", "JDK direct"]):
        print(f"SERIES MEDIAN of {len(rows)} runs, {name} max by third (MiB): "
              + ", ".join(f"{med(k, t):.1f}" for t in range(3)))
PY
fi
