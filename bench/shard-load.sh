#!/usr/bin/env bash
# The operator load run at several replicas (issue 16's benchmark) on the real control plane of
# e2e/, set up as bench/operator-load-real.sh does (bench/real-control-plane.sh): the chart
# installed for its ServiceAccount and RBAC, every replica a separate JVM (`dev.vigil.cli.Main
# operator`, the chart's settings: leader Lease, sharding, shard Lease 15 s, move rate 10 %/min;
# its own free ports; authenticated with the chart's ServiceAccount token), the backends served by
# dev.vigil.bench.AddressFarm in test host vigil-h1, writes counted from the API server's audit log.
#   bench/shard-load.sh                                  # 100 pools x 10 per replica, 3 replicas, 3 runs
#   POOLS=100 PER_POOL=10 REPLICAS=3 INTERVAL_MS=10000 STEADY_S=30 JOIN_S=60 RUNS=3 bench/shard-load.sh
#   BENCH_LOCK=1 bench/shard-load.sh                     # also takes /tmp/vigil-bench.lock (after the e2e lock)
# Each run (dev.vigil.bench.ShardLoadBench, a fresh namespace): one replica with POOLS x PER_POOL,
# then REPLICAS replicas with REPLICAS x POOLS pools (CPU from /proc/<pid>/stat over STEADY_S,
# heap after a full GC; both phases' windows open after the same warm-up: converged, 10 s, then
# until every replica's JIT compilers are quiet, at most SETTLE_JIT_S, 90 s; a capacity above
# REPLICAS is flagged as noise), kill -9 of a replica that does not lead (takeover time, slice flaps), a
# replica joining (moves at the rate limit for JOIN_S) and one leaving (SIGTERM), API writes per
# pool moved, the watch bytes of a 100-endpoint slice. Prints RESULT lines per run and the medians.
# Bounded: every wait has a timeout, each run at most 30 min, every child is killed on exit, the
# farm stops by itself after 30 min, the control plane and test host are torn down on exit.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT=${OUT:-/tmp/vigil-shard-load}
RUNS=${RUNS:-3}
POOLS=${POOLS:-100}
PER_POOL=${PER_POOL:-10}
REPLICAS=${REPLICAS:-3}
INTERVAL_MS=${INTERVAL_MS:-10000}
STEADY_S=${STEADY_S:-30}
SETTLE_JIT_S=${SETTLE_JIT_S:-90} # both phases: after convergence + 10 s, at most this long until the JIT compilers are quiet
JOIN_S=${JOIN_S:-60}
LEASE_S=${LEASE_S:-15}
MOVE_RATE=${MOVE_RATE:-10}
# The chart's JVM: -XX:MaxRAMPercentage=75 of its 512Mi limit.
REPLICA_JAVA_OPTS=${REPLICA_JAVA_OPTS:--Xmx384m -XX:+ExitOnOutOfMemoryError}
mkdir -p "$OUT"
# shellcheck source=bench/real-control-plane.sh
. "$ROOT/bench/real-control-plane.sh"
bench_classpath
bench_control_plane_up $((POOLS * PER_POOL * REPLICAS))

# The chart's ServiceAccount, RBAC and admission policy; the replicas authenticate as it.
HELM="$VIGIL_E2E_BIN/helm"
"$HELM" --kubeconfig "$VIGIL_E2E_KUBECONFIG" install vigil deploy/helm/vigil \
    --namespace vigil-system --create-namespace --wait=false >"$OUT/helm.log"
TOKEN=$($KUBECTL create token vigil -n vigil-system --duration 2h)
cat >"$OUT/replica.kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters: [{name: e2e, cluster: {server: "$VIGIL_E2E_APISERVER", certificate-authority: "$VIGIL_E2E_CA_FILE"}}]
users: [{name: vigil, user: {token: "$TOKEN"}}]
contexts: [{name: vigil, context: {cluster: e2e, user: vigil, namespace: vigil-system}}]
current-context: vigil
KUBECONFIG

: >"$OUT/results.jsonl"
for run in $(seq "$RUNS"); do
  echo "=== shard load, run $run of $RUNS: $REPLICAS replicas x $POOLS pools x $PER_POOL, interval $INTERVAL_MS ms ($(date +%T))" >&2
  mkdir -p "$OUT/run-$run"
  timeout 1800 java -Xmx1g -cp "$CP" dev.vigil.bench.ShardLoadBench \
    --pools "$POOLS" --per-pool "$PER_POOL" --replicas "$REPLICAS" --interval-ms "$INTERVAL_MS" \
    --steady-s "$STEADY_S" --settle-jit-s "$SETTLE_JIT_S" --join-s "$JOIN_S" --lease-s "$LEASE_S" --move-rate "$MOVE_RATE" \
    --kubeconfig "$VIGIL_E2E_KUBECONFIG" --audit-log "$VIGIL_E2E_AUDIT_LOG" \
    --replica-kubeconfig "$OUT/replica.kubeconfig" --replica-java-opts "$REPLICA_JAVA_OPTS" \
    --api-server "$VIGIL_E2E_APISERVER" --ca-file "$VIGIL_E2E_CA_FILE" \
    --token-file "$VIGIL_E2E_ADMIN_TOKEN_FILE" --out "$OUT/run-$run" \
    2>&1 | tee "$OUT/run-$run.log" | grep -E "RESULT|ready after|owned, |JIT compilers|Exception|timed out" >&2 || true
  grep '^JSON ' "$OUT/run-$run.log" | sed 's/^JSON //' >>"$OUT/results.jsonl" || true
done
python3 "$ROOT/bench/shard-summary.py" "$OUT/results.jsonl"
