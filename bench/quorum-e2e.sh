#!/usr/bin/env bash
# Issue 32's checker-quorum figures on the real control plane of e2e/: runs QuorumE2E RUNS times
# (default 3), each on a fresh control plane and fresh test hosts, and prints the median of each
# figure the class prints as "QUORUM-FIGURE <name> <value>" (probes per backend against one
# checker's, seconds to Down after a backend's kill, seconds until zone b's checker is Suspect on
# its gauge and its pools' condition, slice writes while it is cut off, Downs over 60 s of 30 %
# loss on zone c's link, seconds to a new owner and to Down after zone a dies; -1 = never seen).
#   bench/quorum-e2e.sh            # 3 runs
#   RUNS=5 bench/quorum-e2e.sh
# A run whose test fails still counts its figures (cases that need the replicas' Confirmer fail
# until it ships, after measuring). Needs root (network namespaces, iptables) and the e2e tools
# (e2e/control-plane.sh build). Bounded: each run at most 15 minutes; the control plane and the
# hosts are torn down on exit. The machine is shared: run it alone.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
RUNS=${RUNS:-3}
OUT=${OUT:-/tmp/vigil-quorum-e2e}
mkdir -p "$OUT"
rm -f "$OUT"/run*.figures
trap 'e2e/control-plane.sh stop >/dev/null 2>&1 || true; e2e/netns.sh down >/dev/null 2>&1 || true' EXIT
mvn -B -q -pl operator test-compile
report=operator/target/surefire-reports/dev.vigil.e2e.QuorumE2E-output.txt
for run in $(seq 1 "$RUNS"); do
  e2e/netns.sh up 4 >/dev/null 2>&1
  e2e/control-plane.sh start >/dev/null
  eval "$(e2e/control-plane.sh env)"
  rm -f "$report"
  timeout 900 mvn -B -q -pl operator surefire:test -Pe2e -Dtest=QuorumE2E \
    -Dsurefire.failIfNoSpecifiedTests=false >"$OUT/run$run.log" 2>&1 \
    || echo "run $run: the test failed (its log: $OUT/run$run.log)"
  cat "$report" "$OUT/run$run.log" 2>/dev/null | grep -h '^QUORUM-FIGURE ' | sort -u -k2,2 \
    >"$OUT/run$run.figures" || true
  echo "== run $run"
  sed 's/^QUORUM-FIGURE //' "$OUT/run$run.figures"
  e2e/control-plane.sh stop >/dev/null 2>&1 || true
  e2e/netns.sh down >/dev/null 2>&1 || true
done
echo "== median of $RUNS runs"
python3 - "$OUT" <<'PY'
import glob, statistics, sys
figures = {}
for f in sorted(glob.glob(sys.argv[1] + "/run*.figures")):
    for line in open(f).read().splitlines():
        _, name, value = line.split()
        figures.setdefault(name, []).append(float(value))
for name, values in figures.items():
    print("%-24s %10g   (runs: %s)" % (name, statistics.median(values), " ".join("%g" % v for v in values)))
PY
