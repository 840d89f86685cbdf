#!/usr/bin/env python3
"""Medians of the operator load runs (bench/operator-load.sh, operator-load-real.sh).

  load-summary.py RESULTS.jsonl [PROBE_ONLY.jsonl]

CPU per 1,000 probes has one denominator on both sides: the probes completed in the window
(OperatorLoadBench: the operator's vigil_probes counter, its "probes_completed"; ProbeLoadRun: its
completed probes). Operator runs without "probes_completed" divided by the nominal rate (before
2026-12-05): the summary says so and gives no ratio for them.
"""
import json, statistics, sys, os
def load(p):
    return [json.loads(l) for l in open(p) if l.strip()] if os.path.exists(p) else []
runs, probe = load(sys.argv[1]), load(sys.argv[2]) if len(sys.argv) > 2 else []
if not runs:
    sys.exit("no operator run finished")
med = lambda k, rs: statistics.median(r[k] for r in rs)
keys = ["p50_ms", "p99_ms", "max_ms", "writes_per_transition", "slice_writes_per_transition",
        "steady_writes", "cpu_s_per_1000_probes", "probes_completed", "heap_mb", "converge_s",
        "probe_rate", "detect_p50_ms", "detect_max_ms"]
print("SUMMARY %d runs: %d pools x %d, kill %d, interval %d ms, api qps %s burst %d" % (
    len(runs), runs[0]["pools"], runs[0]["per_pool"], runs[0]["kills"], runs[0]["interval_ms"],
    runs[0]["api_qps"], runs[0]["api_burst"]))
for k in keys:
    if any(k not in r for r in runs):
        continue
    print("  %-30s median %-10s runs %s" % (k, round(med(k, runs), 3), [r[k] for r in runs]))
nominal = [i + 1 for i, r in enumerate(runs) if "probes_completed" not in r]
if nominal:
    print("  (runs %s: cpu_s_per_1000_probes per probe asked, not per probe completed: the old rule, "
          "to be re-measured)" % nominal)
if probe:
    p = med("cpu_s_per_1000_probes", probe)
    print("  %-30s median %-10s runs %s" % ("probe-only cpu_s_per_1000", round(p, 4),
          [round(r["cpu_s_per_1000_probes"], 4) for r in probe]))
    same = [r for r in runs if "probes_completed" in r]
    if same:
        print("  %-30s %.2fx (both per completed probe%s)" % (
            "operator / probe-only CPU", med("cpu_s_per_1000_probes", same) / p,
            "; %d of %d operator runs" % (len(same), len(runs)) if len(same) < len(runs) else ""))
    else:
        print("  %-30s none: the operator runs divided by the rate asked, probe-only by probes completed"
              % "operator / probe-only CPU")
