#!/usr/bin/env bash
# Load run of Vigil's HTTP prober + scheduler, side by side with HAProxy, on one loopback farm.
#
#   bench/probe-load.sh                       # N = 1000 5000; fresh, then reuseConnection; HAProxy
#   NS=1000 HAPROXY=0 MEASURE_S=30 bench/probe-load.sh
#   NATIVE=0 OUT=/tmp/probe-load-nio bench/probe-load.sh     # NIO instead of Netty's epoll transport
#   LOOPS=2 bench/probe-load.sh              # backends sharded over 2 schedulers / event loops
#
# Per N: starts ../shared/bench/farm.py (python, separate process: N backends on 127.1.x.y:8080),
# then for reuse=false and reuse=true runs dev.vigil.probe.load.ProbeLoadRun (its own JVM:
# interval 1 s, timeout 1 s, jitter 10 %, rise 2, fall 3) and measures it twice:
#   - from inside (JSON in $OUT/vigil-<reuse>-<N>.json): probes/s vs expected, process CPU per
#     1,000 probes over a MEASURE_S window, heap and RSS growth per backend, gaps between a
#     backend's probe starts (p1/p50/p99, and |gap - interval| p50/p99);
#   - from outside with bench_checker.py --checker external (CPU of the PID, farm-counted probes,
#     RSS, detection of MODES), the same harness HAProxy is measured with.
# Then HAProxy (if installed and HAPROXY != 0) with bench_checker.py --checker haproxy on the
# same farm. Everything is bounded (timeouts, --run-s, --max-seconds) and stopped by PID.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH=${BENCH:-$(cd "$ROOT/../shared/bench" 2>/dev/null && pwd)}
NS=${NS:-"1000 5000"}
REUSES=${REUSES:-"false true"}
WARMUP_S=${WARMUP_S:-10}
MEASURE_S=${MEASURE_S:-30}
MODES=${MODES:-hang}
ROUNDS=${ROUNDS:-1}
HAPROXY=${HAPROXY:-1}
OUT=${OUT:-/tmp/probe-load}
JAVA_OPTS=${JAVA_OPTS:-"-XX:+UseSerialGC -Xms64m -Xmx512m"}
mkdir -p "$OUT"
[ -f "$BENCH/farm.py" ] || { echo "farm.py not found; set BENCH=/path/to/shared/bench" >&2; exit 1; }

echo "building (test classes + classpath)" >&2
(cd "$ROOT" && mvn -B -q -pl operator test-compile dependency:build-classpath \
    -Dmdep.includeScope=test -Dmdep.outputFile="$OUT/cp.txt") || exit 1
CP="$ROOT/operator/target/classes:$ROOT/operator/target/test-classes:$(cat "$OUT/cp.txt")"
# Netty's epoll transport is a dependency of the operator (on the classpath above) and its default;
# NATIVE=0 measures the NIO fallback.
NATIVE=${NATIVE:-1}
ulimit -n 20000 2>/dev/null || ulimit -n "$(ulimit -Hn)"

FARM=""; JPID=""
cleanup() {
  [ -n "$JPID" ] && kill "$JPID" 2>/dev/null
  [ -n "$FARM" ] && kill "$FARM" 2>/dev/null
  wait 2>/dev/null
}
trap cleanup EXIT INT TERM

for N in $NS; do
  python3 "$BENCH/farm.py" -n "$N" --layout ips --base-port 8080 --backlog 1024 \
      --max-seconds 1800 --backends-file "$OUT/backends-$N.txt" 2>"$OUT/farm-$N.err" &
  FARM=$!
  for _ in $(seq 50); do python3 "$BENCH/farmctl.py" ping >/dev/null 2>&1 && break; sleep 0.2; done

  for REUSE in $REUSES; do
    echo "=== N=$N vigil reuse=$REUSE ($(date +%T))" >&2
    rm -f "$OUT/vigil-$REUSE-$N.json"
    # shellcheck disable=SC2086
    java $JAVA_OPTS -cp "$CP" dev.vigil.probe.load.ProbeLoadRun \
        --backends "$OUT/backends-$N.txt" --reuse "$REUSE" --interval-ms 1000 --timeout-ms 1000 \
        --jitter 10 --warmup-s "$WARMUP_S" --measure-s "$MEASURE_S" \
        --run-s $((WARMUP_S + MEASURE_S + 120)) --debug-port 18081 --native "$([ "$NATIVE" = 1 ] && echo true || echo false)" --loops "${LOOPS:-1}" \
        --out "$OUT/vigil-$REUSE-$N.json" >"$OUT/vigil-$REUSE-$N.log" 2>&1 &
    JPID=$!
    sleep 2
    timeout 300 python3 "$BENCH/bench_checker.py" --checker external --pid "$JPID" \
        --healthy-cmd "curl -s --max-time 2 127.0.0.1:18081/healthy" \
        --backends-file "$OUT/backends-$N.txt" --workdir "$OUT" --warmup-s 5 \
        --windows 2 --window-s 15 --modes "$MODES" --rounds "$ROUNDS" --k 20 \
        --out "$OUT/ext-vigil-$REUSE-$N.json"
    for _ in $(seq 120); do [ -s "$OUT/vigil-$REUSE-$N.json" ] && break; sleep 1; done
    kill "$JPID" 2>/dev/null; wait "$JPID" 2>/dev/null; JPID=""
    cat "$OUT/vigil-$REUSE-$N.json" 2>/dev/null
  done

  if [ "$HAPROXY" != 0 ] && command -v haproxy >/dev/null; then
    echo "=== N=$N haproxy ($(date +%T))" >&2
    timeout 300 python3 "$BENCH/bench_checker.py" --checker haproxy --variant plain \
        --backends-file "$OUT/backends-$N.txt" --workdir "$OUT" --warmup-s 5 \
        --windows 2 --window-s 15 --modes "$MODES" --rounds "$ROUNDS" --k 20 \
        --out "$OUT/haproxy-$N.json"
  else
    echo "=== N=$N haproxy not run" >&2
  fi
  kill "$FARM" 2>/dev/null; wait "$FARM" 2>/dev/null; FARM=""
done

echo "=== bench_checker.py view (external = Vigil)" >&2
python3 "$BENCH/summarize.py" "$OUT"/ext-vigil-*.json "$OUT"/haproxy-*.json 2>/dev/null
echo "=== Vigil's own view" >&2
cat "$OUT"/vigil-*.json
