#!/usr/bin/env python3
"""Medians of the operator load runs (bench/operator-load.sh, operator-load-real.sh).

  load-summary.py RESULTS.jsonl [PROBE_ONLY.jsonl]
"""
import json, statistics, sys, os
def load(p):
    return [json.loads(l) for l in open(p) if l.strip()] if os.path.exists(p) else []
runs, probe = load(sys.argv[1]), load(sys.argv[2]) if len(sys.argv) > 2 else []
if not runs:
    sys.exit("no operator run finished")
med = lambda k, rs: statistics.median(r[k] for r in rs)
keys = ["p50_ms", "p99_ms", "max_ms", "writes_per_transition", "slice_writes_per_transition",
        "steady_writes", "cpu_s_per_1000_probes", "heap_mb", "converge_s",
        "probe_rate", "detect_p50_ms", "detect_max_ms"]
print("SUMMARY %d runs: %d pools x %d, kill %d, interval %d ms, api qps %s burst %d" % (
    len(runs), runs[0]["pools"], runs[0]["per_pool"], runs[0]["kills"], runs[0]["interval_ms"],
    runs[0]["api_qps"], runs[0]["api_burst"]))
for k in keys:
    if any(k not in r for r in runs):
        continue
    print("  %-30s median %-10s runs %s" % (k, round(med(k, runs), 3), [r[k] for r in runs]))
if probe:
    p = med("cpu_s_per_1000_probes", probe)
    o = med("cpu_s_per_1000_probes", runs)
    print("  %-30s median %-10s runs %s" % ("probe-only cpu_s_per_1000", round(p, 4),
          [round(r["cpu_s_per_1000_probes"], 4) for r in probe]))
    print("  %-30s %.2fx" % ("operator / probe-only CPU", o / p))
