#!/usr/bin/env bash
# Load run of Vigil's HTTP prober + scheduler, side by side with HAProxy, on one loopback farm.
# One command from a clean clone (root on Debian: installs haproxy and curl when missing; needs
# Java 17, Maven and python3, stdlib only):
#
#   bench/probe-load.sh                       # N = 1000 5000; fresh, then reuseConnection; HAProxy
#   NS=1000 WARMUP_S=5 MEASURE_S=10 bench/probe-load.sh      # quick (about 2 min)
#   NS=1000 HAPROXY=0 MEASURE_S=30 bench/probe-load.sh
#   NATIVE=0 OUT=/tmp/probe-load-nio bench/probe-load.sh     # NIO instead of Netty's epoll transport
#   LANES=1 bench/probe-load.sh              # one lane: every probe on the pool's event loop
#   POOLS=4 bench/probe-load.sh              # the backends split over 4 pools (4 contexts)
#   NS=10000 REUSES=false MODES= ANYWAY=1 bench/probe-load.sh # missed probes at 10,000 backends
#   BUDGET=500 NS=5000 HAPROXY=0 REUSES=false bench/probe-load.sh  # under a probe budget (issue 37;
#                                            # bench/probe-budget.sh runs the issue's rows)
#
# Per N: starts bench/harness/farm.py (python, separate process: N backends on 127.1.x.y:8080),
# then for reuse=false and reuse=true runs dev.vigil.probe.load.ProbeLoadRun (its own JVM:
# interval 1 s, timeout 1 s, jitter 10 %, rise 2, fall 3) and measures it twice:
#   - from inside (JSON in $OUT/vigil-<reuse>-<N>.json): probes/s vs expected, process CPU per
#     1,000 probes over a MEASURE_S window, heap and RSS growth per backend, gaps between a
#     backend's probe starts (p1/p50/p99, and |gap - interval| p50/p99);
#   - from outside with bench_checker.py --checker external (CPU of the PID, farm-counted probes
#     and missed probes per window (N x window / interval minus the farm's count), RSS, detection
#     of MODES), the same harness HAProxy is measured with.
# and HAProxy (if HAPROXY != 0) with bench_checker.py --checker haproxy on the same farm. The order
# matters (harness/lib.sh: one checker's leftovers cost the next up to 40 %), so FIRST sets it:
# FIRST=vigil (default) runs Vigil fresh, Vigil reuse, HAProxy; FIRST=haproxy the mirror, HAProxy,
# Vigil reuse, Vigil fresh. bench/probe-targets.sh alternates it across runs and takes medians;
# each N's order is in $OUT/order-<N>.txt and on stderr.
# Everything is bounded (timeouts, --run-s, --max-seconds) and stopped by PID. Other knobs:
# WINDOWS x WINDOW_S (bench_checker's steady windows, 2 x 15 s), SETTLE_JIT_S (90: after the
# warm-up, both views wait at most this long until the JVM's JIT compilers are quiet, at most 0.05
# CPU s over 5 s, so that the windows measure the prober in its steady state, not HotSpot compiling
# it; each window reports the compiler CPU it still saw; 0 = no wait; Vigil's own window is 5 s
# longer, so its heap reading falls after bench_checker's windows), ROUNDS and MODES (detection),
# ANYWAY=1 (measure the windows even when not every backend got healthy: an overloaded checker),
# FARM_OCTET (farm on 127.<octet>.x.y, 1), CTL_PORT (farm control, 19999), DEBUG_PORT (Vigil's
# /healthy, 18081), FE_PORT (HAProxy's frontend, 18080): change them to run two at once.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH=${BENCH:-$ROOT/bench/harness}
. "$ROOT/bench/harness/lib.sh"
NS=${NS:-"1000 5000"}
REUSES=${REUSES-"false true"}
WARMUP_S=${WARMUP_S:-10}
MEASURE_S=${MEASURE_S:-30}
MODES=${MODES-hang}
ROUNDS=${ROUNDS:-1}
WINDOWS=${WINDOWS:-2}
WINDOW_S=${WINDOW_S:-15}
SETTLE_JIT_S=${SETTLE_JIT_S:-90}
HAPROXY=${HAPROXY:-1}
FIRST=${FIRST:-vigil} # vigil: Vigil fresh, Vigil reuse, HAProxy; haproxy: HAProxy, Vigil reuse, Vigil fresh
case "$FIRST" in vigil | haproxy) ;; *) echo "FIRST must be vigil or haproxy, not '$FIRST'" >&2; exit 2 ;; esac
FARM_OCTET=${FARM_OCTET:-1}
CTL_PORT=${CTL_PORT:-19999}
DEBUG_PORT=${DEBUG_PORT:-18081}
FE_PORT=${FE_PORT:-18080}
OUT=${OUT:-/tmp/probe-load}
JAVA_OPTS=${JAVA_OPTS:-"-XX:+UseSerialGC -Xms64m -Xmx512m"}
mkdir -p "$OUT"
[ -f "$BENCH/farm.py" ] || { echo "farm.py not found in $BENCH" >&2; exit 1; }
require python3 curl:curl || exit 1
[ "$HAPROXY" = 0 ] || require haproxy:haproxy || exit 1

classpath "$OUT" || exit 1
# NS rising: its last N is the run's highest rate/s
for N in $NS; do :; done
# farms_start puts every FARM_MAX backends on the next 127.<octet>/16
LAST_OCTET=$((FARM_OCTET + (N + ${FARM_MAX:-16000} - 1) / ${FARM_MAX:-16000} - 1))
untrack "ip daddr 127.$FARM_OCTET.0.0-127.$LAST_OCTET.255.255" "ip saddr 127.$FARM_OCTET.0.0-127.$LAST_OCTET.255.255" \
  || conntrack_check "$N"
# Netty's epoll transport is a dependency of the operator (on the classpath above) and its default;
# NATIVE=0 measures the NIO fallback.
NATIVE=${NATIVE:-1}
ulimit -n 20000 2>/dev/null || ulimit -n "$(ulimit -Hn)"

FARM=""; JPID=""
cleanup() {
  [ -n "$JPID" ] && kill "$JPID" 2>/dev/null
  [ -n "$FARM" ] && kill $FARM 2>/dev/null
  wait 2>/dev/null
  untrack_end
}
trap cleanup EXIT INT TERM

run_vigil() { # REUSE N
  local REUSE=$1 N=$2
  echo "=== N=$N vigil reuse=$REUSE ($(date +%T))" >&2
  rm -f "$OUT/vigil-$REUSE-$N.json"
  # shellcheck disable=SC2086
  java $JAVA_OPTS -cp "$CP" dev.vigil.probe.load.ProbeLoadRun \
      --backends "$OUT/backends-$N.txt" --reuse "$REUSE" --interval-ms 1000 --timeout-ms 1000 \
      --jitter 10 --warmup-s "$WARMUP_S" --measure-s "$((MEASURE_S + 5))" --settle-jit-s "$SETTLE_JIT_S" \
      --run-s $((WARMUP_S + MEASURE_S + 120)) --debug-port "$DEBUG_PORT" --native "$([ "$NATIVE" = 1 ] && echo true || echo false)" --loops "${LOOPS:-0}" --lanes "${LANES:-0}" --pools "${POOLS:-1}" \
      --budget "${BUDGET:-0}" --max-interval-ms "${MAX_INTERVAL_MS:-0}" \
      --out "$OUT/vigil-$REUSE-$N.json" >"$OUT/vigil-$REUSE-$N.log" 2>&1 &
  JPID=$!
  sleep 2
  if [ "${FARMS:-1}" -gt 1 ]; then
    # bench_checker.py talks to one farm: with more, only Vigil's own view (its completed probes,
    # its process CPU) is measured
    echo "N=$N: $FARMS farms, no farm-side counts: Vigil's own view only" >&2
  else
  timeout 300 python3 "$BENCH/bench_checker.py" --checker external --pid "$JPID" \
      --healthy-cmd "curl -s --max-time 2 127.0.0.1:$DEBUG_PORT/healthy" \
      --backends-file "$OUT/backends-$N.txt" --workdir "$OUT" --warmup-s 5 --settle-jit-s "$SETTLE_JIT_S" --ctl-port "$CTL_PORT" \
      --windows "$WINDOWS" --window-s "$WINDOW_S" --modes "$MODES" --rounds "$ROUNDS" --k 20 \
      ${ANYWAY:+--measure-anyway} --out "$OUT/ext-vigil-$REUSE-$N.json"
  fi
  for _ in $(seq $((WARMUP_S + MEASURE_S + SETTLE_JIT_S + 120))); do [ -s "$OUT/vigil-$REUSE-$N.json" ] && break; sleep 1; done
  kill "$JPID" 2>/dev/null; wait "$JPID" 2>/dev/null; JPID=""
  cat "$OUT/vigil-$REUSE-$N.json" 2>/dev/null
}

run_haproxy() { # N
  local N=$1
  echo "=== N=$N haproxy ($(date +%T))" >&2
  timeout 300 python3 "$BENCH/bench_checker.py" --checker haproxy --variant plain \
      --backends-file "$OUT/backends-$N.txt" --workdir "$OUT" --warmup-s 5 --settle-jit-s "$SETTLE_JIT_S" --ctl-port "$CTL_PORT" \
      --fe-port "$FE_PORT" --windows "$WINDOWS" --window-s "$WINDOW_S" --modes "$MODES" --rounds "$ROUNDS" --k 20 \
      ${ANYWAY:+--measure-anyway} --out "$OUT/haproxy-$N.json"
}

# The legs of one N in the order FIRST asks for: "vigil-false vigil-true haproxy" or its mirror.
legs() {
  local l=() r
  for r in $REUSES; do l+=("vigil-$r"); done
  [ "$HAPROXY" = 0 ] || l+=(haproxy)
  if [ "$FIRST" = haproxy ]; then
    for ((r = ${#l[@]} - 1; r >= 0; r--)); do printf '%s ' "${l[r]}"; done
  else
    printf '%s ' "${l[@]}"
  fi
}

for N in $NS; do
  farms_start "$N" "$OUT" "$FARM_OCTET" "$CTL_PORT" 1800

  ORDER=$(legs)
  echo "$ORDER" >"$OUT/order-$N.txt"
  echo "=== N=$N order: $ORDER(FIRST=$FIRST)" >&2
  [ "$HAPROXY" = 0 ] && echo "=== N=$N haproxy not run" >&2
  for LEG in $ORDER; do
    case "$LEG" in
      haproxy) run_haproxy "$N" ;;
      vigil-*) run_vigil "${LEG#vigil-}" "$N" ;;
    esac
  done
  kill $FARM 2>/dev/null; wait $FARM 2>/dev/null; FARM=""
done

echo "=== bench_checker.py view (external = Vigil)" >&2
python3 "$BENCH/summarize.py" "$OUT"/ext-vigil-*.json "$OUT"/haproxy-*.json 2>/dev/null
echo "=== Vigil's own view" >&2
cat "$OUT"/vigil-*.json
