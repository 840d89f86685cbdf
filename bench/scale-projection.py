#!/usr/bin/env python3
"""The projection of docs/scale.md: replicas, heap, API writes and EndpointSlice watch fan-out for a
cluster of the given size, from measured per-replica inputs (each input names the command that
measured it; pass newer figures as flags).

    python3 bench/scale-projection.py                          # 100,000 backends, 10,000 pools, 500 nodes
    python3 bench/scale-projection.py --cpu-per-1000 0.20 --interval 10
"""
import argparse
import math

p = argparse.ArgumentParser()
p.add_argument("--backends", type=int, default=100_000)
p.add_argument("--pools", type=int, default=10_000)
p.add_argument("--nodes", type=int, default=500)
p.add_argument("--zones", type=int, default=3)
p.add_argument("--other-slice-watchers", type=int, default=10,
               help="ingress controller and mesh replicas that watch every EndpointSlice")
p.add_argument("--interval", type=float, default=5.0, help="probe interval, s (the CRD default: 5 s)")
p.add_argument("--fall", type=int, default=3)
p.add_argument("--replica-cpu", type=float, default=1.0,
               help="CPU cores one replica may spend on steady probing (the rest is headroom)")
# Measured inputs (docs/scale.md, "Inputs").
p.add_argument("--cpu-per-1000", type=float, default=0.238,
               help="whole-operator CPU s per 1,000 probes, steady (bench/operator-load.sh)")
p.add_argument("--heap-per-backend-kb", type=float, default=0.57,
               help="runtime + prober heap per owned backend after a full GC "
                    "(dev.vigil.bench.RuntimeHeap 1000 100: 522 B with the scheduler; "
                    "the prober's own: 57 B, NS=100000 RUNS=3 bench/probe-heap.sh)")
p.add_argument("--heap-per-pod-kb", type=float, default=1.8,
               help="Pod cache heap per watched Pod, the projected Pods Vigil keeps (dev.vigil.bench.PodCacheMemory 20000 projected)")
p.add_argument("--heap-per-endpoint-kb", type=float, default=1.2,
               help="Vigil's own EndpointSlice cache per endpoint, 10-endpoint slices (dev.vigil.bench.SliceBytes 10)")
p.add_argument("--heap-fixed-mb", type=float, default=60.0, help="an idle operator's heap")
p.add_argument("--slice-event-bytes", type=int, default=3889,
               help="one watch event of a 10-endpoint slice, JSON (dev.vigil.bench.SliceBytes 10)")
p.add_argument("--pod-event-bytes", type=int, default=4847, help="one Pod watch event, JSON")
p.add_argument("--writes-per-transition", type=float, default=3.0,
               help="all API writes per transition, slices+status+Events (bench/operator-load.sh kill 1,000)")
p.add_argument("--api-qps", type=float, default=200, help="each replica's write budget (--api-qps)")
p.add_argument("--shard-lease-s", type=float, default=15)
a = p.parse_args()

per_pool = a.backends / a.pools
probes = a.backends / a.interval
cores = probes * a.cpu_per_1000 / 1000
replicas = max(2, math.ceil(cores / a.replica_cpu))
spare = replicas + 1  # one replica may be lost (or rolling) without falling behind
own = a.backends / replicas
heap = (a.heap_fixed_mb + a.backends * a.heap_per_pod_kb / 1024
        + a.backends * a.heap_per_endpoint_kb / 1024 + own * a.heap_per_backend_kb / 1024)
print(f"cluster: {a.backends:,} backends in {a.pools:,} pools ({per_pool:g} per pool), {a.nodes} nodes, "
      f"{a.zones} zones, interval {a.interval:g} s")
print(f"probes/s: {probes:,.0f}; CPU: {cores:.2f} cores at {a.cpu_per_1000} s per 1,000 probes")
print(f"replicas: {replicas} at {a.replica_cpu:g} core each ({spare} to survive the loss of one)")
print(f"heap per replica: {heap:,.0f} MB = {a.heap_fixed_mb:g} fixed + {a.backends * a.heap_per_pod_kb / 1024:,.0f} Pods "
      f"(every replica) + {a.backends * a.heap_per_endpoint_kb / 1024:,.0f} slices (every replica) "
      f"+ {own * a.heap_per_backend_kb / 1024:,.0f} for its {own:,.0f} backends")
leases = replicas / (a.shard_lease_s / 3)
print(f"steady API writes: {leases:.1f}/s shard Lease renewals + the leader Lease; 0 slice, status or Event writes")
down = a.backends / a.zones
slice_writes_max = down  # one per transition (a pool's changes merge only while a write is in flight)
slice_writes_min = min(a.pools, down)  # every pool's changes merged into one write
budget = replicas * a.api_qps
print(f"zone outage ({down:,.0f} backends down): detected after {a.fall} x {a.interval:g} s; "
      f"{slice_writes_min:,.0f}-{slice_writes_max:,.0f} slice writes, "
      f"{down * a.writes_per_transition:,.0f} writes in all (at {a.writes_per_transition:g} per transition)")
print(f"  write budget {replicas} x {a.api_qps:g}/s = {budget:,.0f}/s, slices first: the last slice "
      f"{slice_writes_max / budget:.0f} s after detection, everything in {down * a.writes_per_transition / budget:.0f} s; "
      f"slices within one interval need --api-qps >= {slice_writes_max / a.interval / replicas:,.0f}")
watchers = a.nodes + a.other_slice_watchers
lo = slice_writes_min * a.slice_event_bytes * watchers
hi = slice_writes_max * a.slice_event_bytes * watchers
print(f"EndpointSlice watch fan-out: {watchers} watchers x {a.slice_event_bytes:,} B per event: "
      f"{lo / 1e9:.1f}-{hi / 1e9:.1f} GB sent by the API servers for the outage "
      f"({slice_writes_max * a.slice_event_bytes / 1e6:.0f} MB per watcher at most)")
print(f"Pod watch fan-out to Vigil: {replicas} replicas x {down:,.0f} Pod updates x {a.pod_event_bytes:,} B = "
      f"{replicas * down * a.pod_event_bytes / 1e9:.2f} GB")
