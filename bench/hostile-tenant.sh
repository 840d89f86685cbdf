#!/usr/bin/env bash
# Issue 31's figures: a hostile tenant on the real control plane of e2e/. Runs HostileTenantE2E
# RUNS times (default 3), each on a fresh control plane and fresh test hosts: tenant-b's 50-backend
# pool has backends killed one by one with no attack, then while tenant-a runs every attack at
# once (ReDoS policies, a finished Pod's recycled IP, 20 flapping pools at 100 ms, 100 Pods of
# 255 KiB of annotations, 200 slowloris connections to the intake; see the class's javadoc).
# Prints each run's table and the median of each figure over the runs.
#   bench/hostile-tenant.sh            # 3 runs
#   RUNS=5 bench/hostile-tenant.sh
#   SPLIT_CORES=1 bench/hostile-tenant.sh  # the API server and etcd on core 0, all else on core 1
# SPLIT_CORES=1 gives the control plane a core of its own, as a cluster's control plane has its own
# machines: the attacks, the backends and the operator then cannot slow the API server by taking its
# CPU, and what is left of its slowdown is the load its clients send it (needs 2+ cores, taskset).
# Needs root (network namespaces) and the e2e tools (e2e/control-plane.sh build). Bounded: each run
# at most 15 minutes; the control plane and the hosts are torn down on exit. Run it alone.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
RUNS=${RUNS:-3}
OUT=${OUT:-/tmp/vigil-hostile-tenant}
mkdir -p "$OUT"
trap 'e2e/control-plane.sh stop >/dev/null 2>&1 || true; e2e/netns.sh down >/dev/null 2>&1 || true' EXIT
mvn -B -q -pl operator test-compile
for run in $(seq 1 "$RUNS"); do
  e2e/netns.sh up 4 >/dev/null 2>&1
  e2e/control-plane.sh start >/dev/null
  eval "$(e2e/control-plane.sh env)"
  rm -f operator/target/hostile-tenant.tsv
  pin=()
  if [ "${SPLIT_CORES:-0}" = 1 ]; then
    state=${VIGIL_E2E_STATE:-${VIGIL_E2E_CACHE:-$HOME/.cache/vigil-e2e}/state}
    for pidfile in "$state/kube-apiserver.pid" "$state/etcd.pid"; do
      taskset -a -p -c 0 "$(cat "$pidfile")" >/dev/null
    done
    pin=(taskset -c 1)
  fi
  timeout 900 "${pin[@]}" mvn -B -q -pl operator surefire:test -Pe2e -Dtest=HostileTenantE2E \
    -Dsurefire.failIfNoSpecifiedTests=false >"$OUT/run$run.log" 2>&1 \
    || echo "run $run: the test failed (its log: $OUT/run$run.log)"
  if [ -f operator/target/hostile-tenant.tsv ]; then
    cp operator/target/hostile-tenant.tsv "$OUT/run$run.tsv"
    echo "== run $run"
    column -t -s $'\t' "$OUT/run$run.tsv"
  fi
  e2e/control-plane.sh stop >/dev/null 2>&1 || true
done
echo "== median of $(ls "$OUT"/run*.tsv | wc -l) runs"
python3 - "$OUT" <<'PY'
import glob, statistics, sys
rows = {}
for f in sorted(glob.glob(sys.argv[1] + "/run*.tsv")):
    for line in open(f).read().splitlines()[1:]:
        name, quiet, attacks = line.split("\t")
        rows.setdefault(name, ([], []))
        for i, v in enumerate((quiet, attacks)):
            if v.replace(".", "").isdigit():
                rows[name][i].append(float(v))
            elif "/" in v:
                rows[name][i].append(v)
def med(vs):
    if not vs:
        return "-"
    if isinstance(vs[0], str):
        return " ".join(vs)
    return "%g" % statistics.median(vs)
print("%-26s %10s %10s" % ("figure", "quiet", "attacks"))
for name, (q, a) in rows.items():
    print("%-26s %10s %10s" % (name, med(q), med(a)))
PY
