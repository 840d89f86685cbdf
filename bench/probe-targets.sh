#!/usr/bin/env bash
# Issue 15's targets table, Vigil against HAProxy in the same runs, medians over RUNS runs.
# One command from a clean clone (root on Debian: installs haproxy, nginx-light and curl when
# missing; needs Java 17, Maven and python3, stdlib only):
#
#   bench/probe-targets.sh                 # 3 runs, about 8 min each; take the bench lock first
#   RUNS=1 NS=1000 MISSED_N= RAMP=0 WARMUP_S=5 MEASURE_S=10 WINDOW_S=5 bench/probe-targets.sh  # smoke
#   OPERATOR=1 bench/probe-targets.sh      # also whole operator vs probe-only (+ about 4 min per run)
#   NATIVE=0 bench/probe-targets.sh        # Vigil on NIO instead of Netty's epoll transport (the default)
#   bench/targets-summary.py /tmp/probe-targets    # the table again from a finished run
#
# Each run (OUT/run-K) is, on one farm per N and one nginx farm for the ramp, with the checkers'
# order alternating across runs (order effects reach 40 %, harness/lib.sh): odd runs HAProxy first
# (HAProxy, Vigil reuse, Vigil fresh; the ramp haproxy,vigil), even runs Vigil first (Vigil fresh,
# Vigil reuse, HAProxy; the ramp vigil,haproxy); OUT/run-K/order.txt and the table record it:
#   1. bench/probe-load.sh NS (1000 5000): Vigil fresh connection, Vigil reuseConnection, HAProxy
#      (interval 1 s, timeout 1 s, rise 2, fall 3): CPU per 1,000 probes (WINDOWS x WINDOW_S
#      windows of bench_checker.py), heap and RSS, one hang round of 20 backends;
#   2. bench/probe-load.sh MISSED_N (10000), fresh connections, no detection round: missed probes
#      (N x window / 1 s minus the farm's count, per window) of Vigil and HAProxy;
#   3. bench/probe-ramp.sh (RAMP=1): maximum sustained probe rate of both on RAMP_N (5000)
#      backends, interval RAMP_INTERS (1000,500,250,150,100 ms), RAMP_WARMUP_S + RAMP_WINDOW_S
#      per step, a step sustained when every backend is UP and the rate achieved is >= SUSTAIN_PCT
#      (95) % of the rate asked, each ramp stopping at its first unsustained step;
#   4. OPERATOR=1: after the runs and once the ramp's conntrack entries are gone (at most 130 s),
#      bench/operator-load.sh with RUNS runs (OP_POOLS x OP_PER_POOL,
#      100 x 10, interval OP_INTERVAL_MS 1000, OP_STEADY_S 30 s), then its probe-only runs.
# Then bench/targets-summary.py prints the table (medians; every run's own values in brackets).
# Bounded: every script it calls stops its children by PID and has timeouts; each run at most
# RUN_TIMEOUT_S (1200 s).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/bench/harness/lib.sh"
RUNS=${RUNS:-3}
OUT=${OUT:-/tmp/probe-targets}
export NS=${NS:-"1000 5000"}
MISSED_N=${MISSED_N-10000}
RAMP=${RAMP:-1}
OPERATOR=${OPERATOR:-0}
export WARMUP_S=${WARMUP_S:-10} MEASURE_S=${MEASURE_S:-20} WINDOWS=${WINDOWS:-2} WINDOW_S=${WINDOW_S:-10}
RUN_TIMEOUT_S=${RUN_TIMEOUT_S:-1200}
export MISSED_N
rm -rf "$OUT"/run-* "$OUT/operator" "$OUT/targets.md"
mkdir -p "$OUT"
require python3 curl:curl haproxy:haproxy || exit 1
[ "$RAMP" = 0 ] || require nginx:nginx-light || exit 1
classpath "$OUT" || exit 1
export BENCH_CP_FILE="$OUT/cp.txt"

t0=$(date +%s)
for run in $(seq "$RUNS"); do
  d="$OUT/run-$run"
  mkdir -p "$d/load" "$d/ramp"
  # odd runs HAProxy first, even runs Vigil first: medians over runs then hold both orders
  if [ $((run % 2)) = 1 ]; then first=haproxy checkers=haproxy,vigil; else first=vigil checkers=vigil,haproxy; fi
  echo "$first" >"$d/order.txt"
  echo "=== probe-targets run $run of $RUNS, $first first ($(date +%T), +$(($(date +%s) - t0)) s)" >&2
  timeout "$RUN_TIMEOUT_S" bash -c '
    export FIRST="$4"
    OUT="$1/load" "$2/bench/probe-load.sh" >"$1/load/out.txt"
    if [ -n "$MISSED_N" ]; then
      OUT="$1/load" NS="$MISSED_N" REUSES=false MODES= ANYWAY=1 "$2/bench/probe-load.sh" >>"$1/load/out.txt"
    fi
    if [ "$3" != 0 ]; then
      OUT="$1/ramp" N="${RAMP_N:-5000}" INTERS="${RAMP_INTERS:-1000,500,250,150,100}" CHECKERS="$5" \
        WARMUP_S="${RAMP_WARMUP_S:-5}" WINDOW_S="${RAMP_WINDOW_S:-10}" "$2/bench/probe-ramp.sh" | tee "$1/ramp/out.txt" >&2
    fi' _ "$d" "$ROOT" "$RAMP" "$first" "$checkers" 2>"$d/err.txt" || echo "run $run: exit $? (see $d/err.txt)" >&2
  grep -E "^=== N=|missed|max sustained|ratio|^order" "$d/err.txt" >&2 || true
done

if [ "$OPERATOR" = 1 ]; then
  echo "=== operator-load.sh ($(date +%T), +$(($(date +%s) - t0)) s)" >&2
  conntrack_drain # the last ramp's entries: the operator row ran 1.36x after it, 1.19x alone
  OUT="$OUT/operator" RUNS="$RUNS" POOLS="${OP_POOLS:-100}" PER_POOL="${OP_PER_POOL:-10}" \
    KILLS="${OP_KILLS:-10}" INTERVAL_MS="${OP_INTERVAL_MS:-1000}" STEADY_S="${OP_STEADY_S:-30}" \
    "$ROOT/bench/operator-load.sh" >"$OUT/operator.txt" 2>&1 || echo "operator-load.sh failed (see $OUT/operator.txt)" >&2
fi
echo "=== done in $(($(date +%s) - t0)) s" >&2
python3 "$ROOT/bench/targets-summary.py" "$OUT" | tee "$OUT/targets.md"
