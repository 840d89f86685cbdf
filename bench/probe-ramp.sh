#!/usr/bin/env bash
# Maximum sustained probe rate of Vigil and of HAProxy, in one run on one farm, and their ratio.
# One command from a clean clone (root on Debian: installs haproxy and nginx-light when missing;
# needs Java 17, Maven and python3, stdlib only):
#
#   bench/probe-ramp.sh                                   # N = 5000, interval 1000 .. 100 ms
#   N=1000 INTERS=1000,500 WARMUP_S=3 WINDOW_S=5 bench/probe-ramp.sh     # quick (about 1 min)
#   ALL_STEPS=1 bench/probe-ramp.sh                        # every step, also after the first miss
#
# The ramp is bench/harness/stress_haproxy.py's: nginx (1 worker, `return 200 "ok"`) on N ports
# 127.0.0.1:20000.., the checker started afresh for every step with the interval INTERS shrinking
# (fresh connection per probe, timeout min(1 s, interval) for both, rise 2, fall 3), WARMUP_S,
# then (SETTLE_JIT_S, default 60: at most this long) until the JVM's JIT compilers used at most
# 0.05 CPU s over 5 s, as the CPU windows of probe-load.sh wait (HAProxy waits the 5 s look-back),
# then a WINDOW_S window: probes counted by nginx, the checker's CPU, servers not UP at the end.
# Vigil is dev.vigil.probe.load.ProbeLoadRun (its own JVM, jitter JITTER %, one pool with up to LANES lanes: default the cores, as the operator) on
# the same farm and the same steps. A step is sustained when every backend is UP at the end of its
# window and the achieved rate (counted by nginx) is >= SUSTAIN_PCT % (default 95) of the rate
# asked, N / interval: one rule for both checkers. The maximum sustained rate is the highest
# achieved rate of a sustained step. A checker's ramp stops at its first unsustained step unless
# ALL_STEPS=1. CHECKERS sets the order (haproxy,vigil or vigil,haproxy: bench/probe-targets.sh
# alternates it across runs). Prints both ramps, both maxima and Vigil / HAProxy (a bound, not a
# ratio, where a checker passed every step: its maximum is then the ramp's top); JSON in
# $OUT/ramp.json with the rule and the order. (Until 2026-12-05 SUSTAIN_PCT defaulted to 0: any
# step with every backend UP counted, e.g. 24,331/s achieved of 50,000/s asked.)
# Bounded: each step is WARMUP_S + WINDOW_S (+ the JVM's start), the JVM stops itself, nginx and
# the checkers are stopped by PID.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH=${BENCH:-$ROOT/bench/harness}
. "$ROOT/bench/harness/lib.sh"
N=${N:-5000}
INTERS=${INTERS:-1000,500,250,150,100}
WARMUP_S=${WARMUP_S:-5}
WINDOW_S=${WINDOW_S:-10}
SETTLE_JIT_S=${SETTLE_JIT_S:-60} # after the warm-up, at most this long until the JIT compilers are quiet; 0: no wait
JITTER=${JITTER:-10}
LANES=${LANES:-0}
NATIVE=${NATIVE:-1}   # epoll, as the operator by default; NATIVE=0: NIO
SUSTAIN_PCT=${SUSTAIN_PCT:-95} # a sustained step achieved at least this % of the rate asked (and every backend UP)
BASE_PORT=${BASE_PORT:-20000}
VIGIL_PORT=${VIGIL_PORT:-18083}
CHECKERS=${CHECKERS:-haproxy,vigil}
OUT=${OUT:-/tmp/probe-ramp}
JAVA_OPTS=${JAVA_OPTS:-"-XX:+UseSerialGC -Xms64m -Xmx512m"}
mkdir -p "$OUT"
require python3 haproxy:haproxy nginx:nginx-light || exit 1
case "$CHECKERS" in *vigil*) classpath "$OUT" || exit 1 ;; *) CP="" ;; esac
ulimit -n 20000 2>/dev/null || ulimit -n "$(ulimit -Hn)"
PORTS="$BASE_PORT-$((BASE_PORT + N - 1))"
untrack "ip daddr 127.0.0.1 tcp dport $PORTS" "ip saddr 127.0.0.1 tcp sport $PORTS" ||
  conntrack_check $((N * 1000 / $(tr ',' '\n' <<<"$INTERS" | sort -n | head -1)))
trap untrack_end EXIT
trap 'exit 143' INT TERM

# {backends} {interval_ms} {port} {run_s} are filled in per step by stress_haproxy.py
VIGIL_CMD="java $JAVA_OPTS -cp $CP dev.vigil.probe.load.ProbeLoadRun --backends {backends}
  --reuse false --interval-ms {interval_ms} --timeout-ms {timeout_ms} --jitter $JITTER
  --warmup-s {run_s} --measure-s 1 --run-s {run_s} --debug-port {port}
  --native $([ "$NATIVE" = 1 ] && echo true || echo false) --lanes $LANES"
STOP=--stop-at-fail
[ "${ALL_STEPS:-0}" = 1 ] && STOP=""
# every step at most WARMUP_S + SETTLE_JIT_S + WINDOW_S + 30 s (the JVM's start), plus nginx's
timeout $(($(tr ',' '\n' <<<"$INTERS" | wc -l) * 2 * (WARMUP_S + SETTLE_JIT_S + WINDOW_S + 30) + 60)) \
  python3 "$BENCH/stress_haproxy.py" --n "$N" --base-port "$BASE_PORT" --inters "$INTERS" \
  --warmup-s "$WARMUP_S" --settle-jit-s "$SETTLE_JIT_S" --window-s "$WINDOW_S" --workdir "$OUT" --checkers "$CHECKERS" \
  --vigil-cmd "$VIGIL_CMD" --vigil-port "$VIGIL_PORT" --sustain-pct "$SUSTAIN_PCT" --match-timeout $STOP \
  --json "$OUT/ramp.json"
