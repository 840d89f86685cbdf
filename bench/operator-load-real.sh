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
# exit; the farm stops by itself after 30 min.
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
[ "$N" -le 60000 ] || { echo "at most 60,000 backends (198.19.0.0/16 at 250 per /24)" >&2; exit 2; }
mkdir -p "$OUT"

for piece in kubernetes etcd; do e2e/control-plane.sh build "$piece"; done
# One control plane per machine: the E2E suite takes the same lock.
until mkdir /tmp/vigil-e2e.lock 2>/dev/null; do echo "waiting for /tmp/vigil-e2e.lock" >&2; sleep 20; done
cleanup() {
  ip route del 198.19.0.0/16 dev vigil-br0 2>/dev/null || true
  e2e/control-plane.sh stop || true
  e2e/netns.sh down || true
  rmdir /tmp/vigil-e2e.lock 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM
e2e/netns.sh up 1
for i in $(seq 0 $((N - 1))); do
  echo "addr add 198.19.$((i / 250)).$((i % 250 + 1))/32 dev eth0"
done | ip netns exec vigil-h1 ip -batch -
ip route replace 198.19.0.0/16 dev vigil-br0
e2e/control-plane.sh start
eval "$(e2e/control-plane.sh env)"
KUBECTL="$(e2e/control-plane.sh bindir)/kubectl --kubeconfig $VIGIL_E2E_KUBECONFIG"
$KUBECTL apply --server-side -f crds/
$KUBECTL wait --for condition=established --timeout=60s \
    crd/healthpolicies.vigil.dev crd/backendpools.vigil.dev

mvn -B -q -pl operator test-compile dependency:build-classpath \
    -Dmdep.includeScope=test -Dmdep.outputFile="$OUT/cp.txt"
CP="$ROOT/operator/target/classes:$ROOT/operator/target/test-classes:$(cat "$OUT/cp.txt")"
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
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
