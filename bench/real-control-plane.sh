# Sourced by the load runs against the real control plane of e2e/ (bench/operator-load-real.sh,
# bench/shard-load.sh); not run on its own. Needs root and $ROOT (the repository) and $OUT.
#   bench_classpath                 test-compile (once no benchmark holds /tmp/vigil-bench.lock); sets CP (operator classes, test classes, deps)
#   bench_control_plane_up N        builds (cached) and starts the control plane with N backend
#                                   addresses in test host vigil-h1, applies the CRDs, sets
#                                   KUBECTL and the VIGIL_E2E_* variables; a trap tears it all
#                                   down on exit
# Locks: /tmp/vigil-e2e.lock always (one control plane per machine; the E2E suite takes it too),
# unless VIGIL_E2E_LOCK_HELD=1 says the caller holds it; with BENCH_LOCK=1 also
# /tmp/vigil-bench.lock after it (e2e first, then bench, as helper/RULES.md asks), then a wait of
# at most 5 min for a 1-minute load average below 1.5. Both are released on exit.
#
# The API server refuses loopback endpoint addresses, so the backends live in a test host
# (e2e/netns.sh, network namespace vigil-h1): its eth0 gets one address per backend from
# 198.19.0.0/16 (RFC 2544's benchmark range, inside 198.18.0.0/15 like the test hosts), the root
# namespace routes that range to the test host's address on the bridge, and dev.vigil.bench.AddressFarm serves them all
# from one JVM inside the namespace.

bench_classpath() {
  # no build while another benchmark holds the machine
  while [ -d /tmp/vigil-bench.lock ]; do echo "waiting for /tmp/vigil-bench.lock to go" >&2; sleep 30; done
  (cd "$ROOT" && mvn -B -q -pl operator test-compile dependency:build-classpath \
      -Dmdep.includeScope=test -Dmdep.outputFile="$OUT/cp.txt")
  CP="$ROOT/operator/target/classes:$ROOT/operator/target/test-classes:$(cat "$OUT/cp.txt")"
  ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
}

_bench_took_e2e=""
_bench_took_bench=""
_bench_cleanup() {
  ip route del 198.19.0.0/16 dev vigil-br0 2>/dev/null || true
  (cd "$ROOT" && e2e/control-plane.sh stop) || true
  (cd "$ROOT" && e2e/netns.sh down) || true
  [ -z "$_bench_took_bench" ] || rmdir /tmp/vigil-bench.lock 2>/dev/null || true
  [ -z "$_bench_took_e2e" ] || rmdir /tmp/vigil-e2e.lock 2>/dev/null || true
}

bench_control_plane_up() {
  local n=$1
  [ "$n" -le 60000 ] || { echo "at most 60,000 backends (198.19.0.0/16 at 250 per /24)" >&2; exit 2; }
  (cd "$ROOT" && for piece in kubernetes etcd; do e2e/control-plane.sh build "$piece"; done)
  trap _bench_cleanup EXIT
  trap 'exit 130' INT TERM
  if [ "${VIGIL_E2E_LOCK_HELD:-0}" != 1 ]; then
    until mkdir /tmp/vigil-e2e.lock 2>/dev/null; do echo "waiting for /tmp/vigil-e2e.lock" >&2; sleep 20; done
    _bench_took_e2e=1
  fi
  if [ "${BENCH_LOCK:-0}" = 1 ]; then
    until mkdir /tmp/vigil-bench.lock 2>/dev/null; do echo "waiting for /tmp/vigil-bench.lock" >&2; sleep 20; done
    _bench_took_bench=1
    for _ in $(seq 30); do
      awk '{exit !($1 < 1.5)}' /proc/loadavg && break
      sleep 10
    done
    echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  fi
  (cd "$ROOT" && e2e/netns.sh up 1)
  for i in $(seq 0 $((n - 1))); do
    echo "addr add 198.19.$((i / 250)).$((i % 250 + 1))/32 dev eth0"
  done | ip netns exec vigil-h1 ip -batch -
  # via the host's own address: one neighbour entry instead of one per backend (the root
  # namespace's table overflows at gc_thresh3, 1,024 by default, and drops the rest)
  ip route replace 198.19.0.0/16 via "$(cd "$ROOT" && e2e/netns.sh addr 1)" dev vigil-br0
  (cd "$ROOT" && e2e/control-plane.sh start)
  eval "$(cd "$ROOT" && e2e/control-plane.sh env)"
  KUBECTL="$(cd "$ROOT" && e2e/control-plane.sh bindir)/kubectl --kubeconfig $VIGIL_E2E_KUBECONFIG"
  $KUBECTL apply --server-side -f "$ROOT/crds/"
  $KUBECTL wait --for condition=established --timeout=60s \
      crd/healthpolicies.vigil.dev crd/backendpools.vigil.dev
}
