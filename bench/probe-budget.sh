#!/usr/bin/env bash
# Issue 37's probe-budget rows, one command each (run alone, on a quiet machine; root on Debian as
# bench/probe-load.sh). Each row is one of the existing scripts with the budget set; this script
# only picks their knobs and prints the figures the issue's table asks for.
#
#   bench/probe-budget.sh tenfold      # demand 10x the budget: probes/s within 2 % of it (counted
#                                      # by the farm and by the prober), every hang Down within the
#                                      # reported effective detection time
#   bench/probe-budget.sh cpu          # CPU per 1,000 probes at the budget, 10,000 and 100,000
#                                      # backends (flat is the target)
#   RUNS=3 bench/probe-budget.sh tenfold   # medians of 3 (the issue's rule)
#
# tenfold: N backends (default 5,000) at interval 1 s ask N probes/s; BUDGET = N / 10; maxInterval
# 60 s (MAX_INTERVAL_MS) so the stretch (10) stays below it. Vigil's JSON ($OUT/vigil-false-N.json)
# carries budget_per_s, planned_per_s, probes_over_budget (its own completed probes / budget) and
# effective_detection_ms; bench_checker's ($OUT/ext-vigil-false-N.json) the farm-counted probes/s
# and the detection of MODES (hang: a backend stops answering) per round.
# cpu: BUDGET = 5,000/s whatever N (interval 1 s), so the rate stays the same while the backends
# grow tenfold; cpu_s_per_1000_probes in each N's JSON.
# Smoke (about 20 s, proves the wiring, measures nothing): NS=200 WARMUP_S=3 MEASURE_S=5
# SETTLE_JIT_S=0 WINDOWS=1 WINDOW_S=3 MODES= bench/probe-budget.sh tenfold
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROW=${1:-tenfold}
RUNS=${RUNS:-1}
OUT_BASE=${OUT:-/tmp/probe-budget}
export HAPROXY=0 REUSES=false
export MAX_INTERVAL_MS=${MAX_INTERVAL_MS:-60000}
case "$ROW" in
  tenfold)
    NS=${NS:-5000}
    export MODES=${MODES-hang}
    for n in $NS; do
      for run in $(seq "$RUNS"); do
        OUT="$OUT_BASE/tenfold-$n-$run" NS="$n" BUDGET=$((n / 10)) ANYWAY=1 "$ROOT/bench/probe-load.sh" || exit 1
      done
    done
    python3 - "$OUT_BASE" <<'PY'
import glob, json, os, statistics, sys
base = sys.argv[1]
for d in sorted(glob.glob(os.path.join(base, "tenfold-*"))):
    for f in glob.glob(os.path.join(d, "vigil-false-*.json")):
        v = json.load(open(f))
        ext_f = f.replace("vigil-false", "ext-vigil-false")
        ext = json.load(open(ext_f)) if os.path.exists(ext_f) else {}
        farm = [w["probes_per_s"] for w in ext.get("steady", [])]
        det = (ext.get("transitions") or {}).get("hang", {}).get("detect_s")
        print("%s: budget %.0f/s, planned %.1f/s, prober %.1f/s (%.2f%% of budget), farm %s/s, "
              "effective detection %d ms (wanted %d ms), hang detect %s"
              % (os.path.basename(d), v["budget_per_s"], v["planned_per_s"], v["probes_per_s"],
                 100 * v["probes_over_budget"], [round(x, 1) for x in farm],
                 v["effective_detection_ms"], v["wanted_detection_ms"], det))
PY
    ;;
  cpu)
    NS=${NS:-"10000 100000"}
    for n in $NS; do
      for run in $(seq "$RUNS"); do
        OUT="$OUT_BASE/cpu-$n-$run" NS="$n" BUDGET=${BUDGET:-5000} MODES= ANYWAY=1 "$ROOT/bench/probe-load.sh" || exit 1
      done
    done
    for f in "$OUT_BASE"/cpu-*/vigil-false-*.json; do
      python3 -c 'import json,sys; v=json.load(open(sys.argv[1])); print(sys.argv[1], v["n"], "backends:", v["probes_per_s"], "probes/s,", v["cpu_s_per_1000_probes"], "cpu s per 1,000 probes")' "$f"
    done
    ;;
  *) echo "usage: bench/probe-budget.sh tenfold|cpu" >&2; exit 2 ;;
esac
