#!/usr/bin/env bash
# Load run of the whole operator (issues 4 and 11): P pools x B backends on loopback, K of them
# killed at once (one per pool), repeated RUNS times, then (PROBE_ONLY=1) the probe-only load run
# at the same settings on the same farm layout, in the same POOLS pools (PROBE_POOLS=1: one), so
# CPU per 1,000 probes compares in one run: both per probe completed in the window (the operator's
# vigil_probes counter, ProbeLoadRun's completed probes; before 2026-12-05 the operator's was per
# probe asked).
# One command from a clean clone (Java 17, Maven, python3 stdlib only):
#   bench/operator-load.sh                                       # 1,000 x 10, kill 100, 3 runs
#   POOLS=100 PER_POOL=10 KILLS=30 STEADY_S=60 INTERVAL_MS=10000 bench/operator-load.sh
#   POOLS=1000 KILLS=1000 INTERVAL_MS=10000 RUNS=3 bench/operator-load.sh
#   FAST_INTERVAL_MS=1000 POOLS=100 KILLS=30 bench/operator-load.sh   # the policy with fastInterval
#   PROFILE=1 ...                      # async-profiler flame graphs of the steady and kill windows
# Backends: bench/harness/farm.py (separate process, 127.2.x.y:8080); API server: the embedded
# Fabric8 mock server in its own JVM (dev.vigil.bench.ApiServerMain); the operator alone in the
# measured JVM (dev.vigil.bench.OperatorLoadBench). Each run prints RESULT lines and one JSON
# line; the summary prints the median of every figure over the runs. Both steady windows (whole
# operator and probe-only) start once the JVM's JIT compilers are quiet (SETTLE_JIT_S, at most 90 s;
# see bench/probe-load.sh) and report the compiler CPU they still saw (jit_cpu_s). Bounded: the farm stops
# after 30 min, every wait has a timeout, children are killed on exit. Runs from a clean clone
# (Maven resolves what it needs; no offline mode).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FARM_DIR=${FARM_DIR:-$ROOT/bench/harness}
. "$ROOT/bench/harness/lib.sh"
OUT=${OUT:-/tmp/vigil-operator-load}
RUNS=${RUNS:-3}
POOLS=${POOLS:-1000}
PER_POOL=${PER_POOL:-10}
INTERVAL_MS=${INTERVAL_MS:-10000}
KILLS=${KILLS:-100}
STEADY_S=${STEADY_S:-60}
SETTLE_JIT_S=${SETTLE_JIT_S:-90}
NATIVE=${NATIVE:-true}   # Netty's epoll transport for both, as the operator runs by default; false: NIO
PROBE_ONLY=${PROBE_ONLY:-1}
JAVA_OPTS=${JAVA_OPTS:--Xmx2g}
mkdir -p "$OUT"
require python3
classpath "$OUT"
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
: >"$OUT/results.jsonl"
for run in $(seq "$RUNS"); do
  echo "=== run $run of $RUNS: $POOLS pools x $PER_POOL, kill $KILLS, interval $INTERVAL_MS ms ($(date +%T))" >&2
  # shellcheck disable=SC2086
  timeout 1800 java $JAVA_OPTS -cp "$CP" dev.vigil.bench.OperatorLoadBench \
    --pools "$POOLS" --per-pool "$PER_POOL" --interval-ms "$INTERVAL_MS" \
    --kills "$KILLS" --steady-s "$STEADY_S" --settle-jit-s "$SETTLE_JIT_S" --native "$NATIVE" --farm-dir "$FARM_DIR" \
    ${API_QPS:+--api-qps "$API_QPS"} ${API_BURST:+--api-burst "$API_BURST"} \
    ${FAST_INTERVAL_MS:+--fast-interval-ms "$FAST_INTERVAL_MS"} ${PROFILE:+--profile "$OUT/profile-$run"} \
    2>&1 | tee "$OUT/run-$run.log" | grep -E "RESULT|converged|^JSON" >&2 || true
  grep '^JSON ' "$OUT/run-$run.log" | sed 's/^JSON //' >>"$OUT/results.jsonl" || true
done

if [ "$PROBE_ONLY" = 1 ]; then
  # The probe-only run at the same settings: the same number of backends on the same kind of farm,
  # the same interval and timeout (the bench policy: timeout = interval / 2, no jitter), in the
  # same pools (POOLS schedulers on Vert.x's default event loops, as the operator runs them), so
  # the difference is what the operator adds, not how many schedulers wake up (PROBE_POOLS=1: one).
  N=$((POOLS * PER_POOL))
  FARM=""
  trap '[ -n "$FARM" ] && kill "$FARM" 2>/dev/null' EXIT
  python3 "$FARM_DIR/farm.py" -n "$N" --layout ips --ip-second-octet 2 --base-port 8080 \
      --ctl-port 19996 --backlog 1024 --max-seconds 1800 \
      --backends-file "$OUT/probe-backends.txt" 2>"$OUT/probe-farm.err" &
  FARM=$!
  sleep 5
  : >"$OUT/probe-only.jsonl"
  for run in $(seq "$RUNS"); do
    echo "=== probe-only run $run of $RUNS: $N backends, interval $INTERVAL_MS ms ($(date +%T))" >&2
    # shellcheck disable=SC2086
    timeout 600 java $JAVA_OPTS -cp "$CP" dev.vigil.probe.load.ProbeLoadRun \
        --backends "$OUT/probe-backends.txt" --reuse false --interval-ms "$INTERVAL_MS" \
        --timeout-ms $((INTERVAL_MS / 2)) --jitter 0 --warmup-s $((INTERVAL_MS * 2 / 1000 + 10)) \
        --measure-s "$STEADY_S" --settle-jit-s "$SETTLE_JIT_S" --native "$NATIVE" --run-s $((INTERVAL_MS * 2 / 1000 + STEADY_S + 60)) \
        --pools "${PROBE_POOLS:-$POOLS}" --debug-port 18082 --out "$OUT/probe-only-$run.json" >"$OUT/probe-only-$run.log" 2>&1 || true
    cat "$OUT/probe-only-$run.json" >>"$OUT/probe-only.jsonl" 2>/dev/null || true
  done
  kill "$FARM" 2>/dev/null || true
  FARM=""
fi

python3 "$ROOT/bench/load-summary.py" "$OUT/results.jsonl" "$OUT/probe-only.jsonl"
