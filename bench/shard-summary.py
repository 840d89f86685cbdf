#!/usr/bin/env python3
"""Medians of the sharded load runs (bench/shard-load.sh): shard-summary.py RESULTS.jsonl"""
import json, statistics, sys, os
runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()] if os.path.exists(sys.argv[1]) else []
if not runs:
    sys.exit("no sharded load run finished")
r0 = runs[0]
print("SUMMARY %d runs: %d replicas x %d pools x %d, interval %d ms, steady %d s" % (
    len(runs), r0["replicas"], r0["pools_per_replica"], r0["per_pool"], r0["interval_ms"], r0["steady_s"]))
for k in ["single_jit_settle_s", "single_jit_cpu_s", "jit_settle_s",
          "single_cpu_cores", "single_cpu_s_per_1000_probes", "single_heap_mb", "total_cpu_cores",
          "cpu_s_per_1000_probes", "capacity_ratio", "sharder_thread_cores",
          "leader_extra_cpu_per_backend_pct", "steady_writes", "lease_writes_per_s", "killed_pools", "takeover_owned_s",
          "takeover_probed_s", "takeover_s", "flaps_after_kill", "join_moved",
          "join_writes_per_move", "leave_moved", "leave_s", "leave_writes_per_move", "flaps"]:
    vals = [r[k] for r in runs if k in r]
    if vals:
        print("  %-34s median %-10s runs %s" % (k, round(statistics.median(vals), 4),
                                                 [round(v, 4) for v in vals]))
# A capacity above the replica count is more than R replicas can give: noise of the baseline or
# the windows (runs before 2026-12-05 measured the single replica 10 s after converging, still
# JIT-compiling, and carry no capacity_above_replicas field), never a capacity.
caps = [r["capacity_ratio"] for r in runs if "capacity_ratio" in r]
above = [r["capacity_ratio"] for r in runs if r.get("capacity_ratio", 0) > r["replicas"]]
if above:
    print("  NOISE: capacity_ratio above %d replicas in %d of %d runs %s: more than the replicas can give, not a "
          "capacity; the median above is not a figure to quote" % (r0["replicas"], len(above), len(caps),
                                                                   [round(c, 2) for c in above]))
if any("single_jit_settle_s" not in r for r in runs):
    print("  (runs without single_jit_settle_s: the single replica measured 10 s after converging, without "
          "the JIT settling of the multi-replica phase: the old rule, to be re-measured)")
for k in ["pools_owned", "replica_cpu_cores", "replica_jit_cpu_s", "replica_heap_mb", "join_writes", "join_other_writes",
          "leave_writes", "leave_other_writes", "watch_event_bytes_100_endpoints"]:
    print("  %-34s runs %s" % (k, [r.get(k) for r in runs]))
