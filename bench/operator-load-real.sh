#!/usr/bin/env bash
# The operator load run against the real control plane of e2e/ (kube-apiserver + etcd built from
# Go modules, cached): P pools x B backends, K killed at once (one per pool), RUNS times, medians.
#   bench/operator-load-real.sh                               # 100 x 10, kill 30, 3 runs
#   POOLS=100 KILLS=30 INTERVAL_MS=10000 RUNS=3 bench/operator-load-real.sh
# The API server refuses loopback endpoint addresses, so the backends live in a test host
# (e2e/netns.sh, network namespace vigil-h1): its eth0 gets one address per backend from
# 198.19.0.0/16 (RFC 2544's benchmark range, inside 198.18.0.0/15 like the test hosts), the root
# namespace routes that range to the test bridge, and dev.vigil.bench.AddressFarm serves them all
# from one JVM inside the namespace. Writes are counted from the API server's audit log (writes
# only, at Metadata level); reads are not logged there. Needs root. Everything is torn down on
# exit; the farm stops by itself after 30 min. The set-up is shared with bench/shard-load.sh
# (bench/real-control-plane.sh, which also takes the locks).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT=${OUT:-/tmp/vigil-operator-load-real}
RUNS=${RUNS:-3}
POOLS=${POOLS:-100}
PER_POOL=${PER_POOL:-10}
INTERVAL_MS=${INTERVAL_MS:-10000}
KILLS=${KILLS:-30}
STEADY_S=${STEADY_S:-60}
JAVA_OPTS=${JAVA_OPTS:--Xmx2g}
N=$((POOLS * PER_POOL))
mkdir -p "$OUT"
# shellcheck source=bench/real-control-plane.sh
. "$ROOT/bench/real-control-plane.sh"
bench_classpath
bench_control_plane_up "$N"
: >"$OUT/results.jsonl"
for run in $(seq "$RUNS"); do
  echo "=== real control plane, run $run of $RUNS: $POOLS pools x $PER_POOL, kill $KILLS, interval $INTERVAL_MS ms ($(date +%T))" >&2
  # shellcheck disable=SC2086
  timeout 1800 java $JAVA_OPTS -cp "$CP" dev.vigil.bench.OperatorLoadBench \
    --pools "$POOLS" --per-pool "$PER_POOL" --interval-ms "$INTERVAL_MS" \
    --kills "$KILLS" --steady-s "$STEADY_S" \
    --kubeconfig "$VIGIL_E2E_KUBECONFIG" --audit-log "$VIGIL_E2E_AUDIT_LOG" \
    ${API_QPS:+--api-qps "$API_QPS"} ${API_BURST:+--api-burst "$API_BURST"} \
    2>&1 | tee "$OUT/run-$run.log" | grep -E "RESULT|converged|^JSON" >&2 || true
  grep '^JSON ' "$OUT/run-$run.log" | sed 's/^JSON //' >>"$OUT/results.jsonl" || true
done
python3 "$ROOT/bench/load-summary.py" "$OUT/results.jsonl"
