#!/usr/bin/env bash
# Where a probe's CPU goes: a CPU flame graph of Vigil's prober and syscall counts per probe for
# Vigil and HAProxy, side by side, on one loopback farm (issue 15).
#
#   bench/profile-probes.sh                          # N=5000, interval 1 s, fresh connection
#   TAG=after bench/profile-probes.sh                # bench/profiles/probes-after-5000.html,
#                                                    # bench/profiles/syscalls-after.md
#   N=1000 WINDOW_S=20 NATIVE=0 HAPROXY=0 bench/profile-probes.sh   # NIO instead of epoll
#
# Steps (each process alone on the farm, every window WINDOW_S long):
#   1. Vigil: dev.vigil.probe.load.ProbeLoadRun (its own JVM, interval 1 s, timeout 1 s, jitter 10 %)
#      after WARMUP_S: one window under async-profiler (itimer, loaded with jcmd JVMTI.agent_load
#      from the async-profiler jar of the test classpath) -> bench/profiles/probes-$TAG-$N.html/.txt,
#      with process CPU (utime+stime) and farm-counted probes; then a fresh JVM at interval
#      STRACE_INTERVAL_MS (default 20000: 250 probes/s) and one window under `strace -c -f`.
#   2. HAProxy (if installed and HAPROXY != 0): the config bench_checker.py generates (httpchk GET
#      /healthz, rise 2, fall 3, timeout check 1s), `haproxy -db`: one plain window at inter 1 s
#      (CPU), then one at inter STRACE_INTERVAL_MS under `strace -c -f`.
#   3. bench/profiles/syscalls-$TAG.md: calls per probe by group, both checkers side by side.
# strace stops the traced process at every syscall (tens of microseconds in a VM): even at 1,000
# probes/s the JVM falls behind until its probes time out, so the traced windows run at a lower
# rate (per-probe counts are what they are for; probes are counted by the farm in the same window). Needs strace, haproxy, python3, a JDK
# with jcmd, Maven; farm.py from $BENCH (default bench/harness; or FARM_PY / FARMCTL_PY).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH=${BENCH:-$ROOT/bench/harness}
FARM_PY=${FARM_PY:-$BENCH/farm.py}
FARMCTL_PY=${FARMCTL_PY:-$BENCH/farmctl.py}
N=${N:-5000}
TAG=${TAG:-before}
WARMUP_S=${WARMUP_S:-15}
WINDOW_S=${WINDOW_S:-30}
NATIVE=${NATIVE:-1}
HAPROXY=${HAPROXY:-1}
STRACE_INTERVAL_MS=${STRACE_INTERVAL_MS:-20000}
FE_PORT=${FE_PORT:-18090}
# the farm's addresses and ports, apart from probe-load.sh's (127.1.x.y, 19999, 18081)
OCTET=${OCTET:-23}
CTL_PORT=${CTL_PORT:-19923}
DEBUG_PORT=${DEBUG_PORT:-18323}
OUT=${OUT:-/tmp/profile-probes}
PROFILES=${PROFILES:-$ROOT/bench/profiles}
JAVA_OPTS=${JAVA_OPTS:-"-XX:+UseSerialGC -Xms64m -Xmx512m -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints"}
mkdir -p "$OUT" "$PROFILES"
[ -f "$FARM_PY" ] || { echo "farm.py not found; set BENCH or FARM_PY" >&2; exit 1; }
. "$ROOT/bench/harness/lib.sh"
require python3 strace:strace unzip:unzip || exit 1
[ "$HAPROXY" = 0 ] || require haproxy:haproxy || exit 1
classpath "$OUT" || exit 1
AP_JAR=$(tr ':' '\n' <"$OUT/cp.txt" | grep '/async-profiler-[^/]*\.jar$' | head -1)
[ -n "$AP_JAR" ] || { echo "async-profiler jar not on the test classpath" >&2; exit 1; }
AP_LIB="$OUT/libasyncProfiler.so"
unzip -p "$AP_JAR" linux-x64/libasyncProfiler.so >"$AP_LIB" || exit 1
ulimit -n 20000 2>/dev/null || ulimit -n "$(ulimit -Hn)"

FARM=""; PID=""
cleanup() {
  [ -n "$PID" ] && kill "$PID" 2>/dev/null
  [ -n "$FARM" ] && kill "$FARM" 2>/dev/null
  wait 2>/dev/null
}
trap cleanup EXIT INT TERM

# the farm's request count; a busy farm can miss one control connection (a 10 s timeout), so 3 tries
requests() {
  local r
  for _ in 1 2 3; do
    r=$(python3 "$FARMCTL_PY" --ctl-port "$CTL_PORT" stats 2>/dev/null \
        | python3 -c 'import json,sys; print(json.load(sys.stdin)["requests"])' 2>/dev/null) \
        && [ -n "$r" ] && { echo "$r"; return 0; }
  done
  echo "farm stats unreadable" >&2
  return 1
}
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# window NAME PID [command...]: runs the command (or sleeps) for WINDOW_S, records probes and CPU
window() {
  local name=$1 pid=$2; shift 2
  local r0 c0 r1 c1 t0 t1
  r0=$(requests); c0=$(cpu_ticks "$pid"); t0=$(date +%s.%N)
  if [ $# -gt 0 ]; then "$@"; else sleep "$WINDOW_S"; fi
  r1=$(requests); c1=$(cpu_ticks "$pid"); t1=$(date +%s.%N)
  echo "$name $((r1 - r0)) $((c1 - c0)) $(echo "$t1 - $t0" | bc)" >>"$OUT/windows-$TAG.txt"
  echo "  $name: $((r1 - r0)) probes, $((c1 - c0)) CPU ticks" >&2
}
trace() { timeout -s INT "$WINDOW_S" strace -c -f -p "$1" -o "$2" >/dev/null 2>&1; }

rm -f "$OUT/windows-$TAG.txt"
python3 "$FARM_PY" -n "$N" --layout ips --ip-second-octet "$OCTET" --ctl-port "$CTL_PORT" --base-port 8080 --backlog 1024 \
    --max-seconds 1800 --backends-file "$OUT/backends-$N.txt" 2>"$OUT/farm-$N.err" &
FARM=$!
for _ in $(seq 50); do python3 "$FARMCTL_PY" --ctl-port "$CTL_PORT" ping >/dev/null 2>&1 && break; sleep 0.2; done

# vigil INTERVAL_MS: starts ProbeLoadRun on the farm (PID), waits WARMUP_S
vigil() {
  echo "=== vigil N=$N interval $1 ms ($(date +%T))" >&2
  # shellcheck disable=SC2086
  java $JAVA_OPTS -cp "$CP" dev.vigil.probe.load.ProbeLoadRun \
      --backends "$OUT/backends-$N.txt" --reuse false --interval-ms "$1" --timeout-ms 1000 \
      --jitter 10 --warmup-s 1 --measure-s 600 --run-s 900 --debug-port "$DEBUG_PORT" \
      --native "$([ "$NATIVE" = 1 ] && echo true || echo false)" --lanes "${LANES:-0}" \
      >"$OUT/vigil-$TAG-$1.log" 2>&1 &
  PID=$!
  sleep "$WARMUP_S"
  grep -h "transport" "$OUT/vigil-$TAG-$1.log" >&2
}
# haproxy INTERVAL_MS: the config bench_checker.py generates, haproxy -db (PID), waits WARMUP_S
haproxy_run() {
  echo "=== haproxy N=$N interval $1 ms ($(date +%T))" >&2
  local cfg="$OUT/haproxy-$N-$1.cfg"
  {
    printf 'global\n    maxconn 4096\n\ndefaults\n    mode http\n    timeout connect 1000ms\n'
    printf '    timeout check 1000ms\n    timeout client 10s\n    timeout server 10s\n\n'
    printf 'frontend fe_bench\n    bind 127.0.0.1:%s\n    default_backend be_farm\n\n' "$FE_PORT"
    printf 'backend be_farm\n    balance roundrobin\n    option httpchk GET /healthz\n'
    printf '    default-server inter %s rise 2 fall 3\n' "$1"
    awk 'NF == 3 { printf "    server s%d %s:%d id %d check\n", $1, $2, $3, $1 + 1 }' "$OUT/backends-$N.txt"
  } >"$cfg"
  haproxy -db -f "$cfg" >"$OUT/haproxy-$TAG-$1.log" 2>&1 &
  PID=$!
  sleep "$WARMUP_S"
  kill -0 "$PID" 2>/dev/null || { tail -3 "$OUT/haproxy-$TAG-$1.log" >&2; PID=""; return 1; }
}
# jcmd reads an unquoted argument with "=" as a named one: the options go in double quotes.
profile() {
  jcmd "$PID" JVMTI.agent_load "$AP_LIB" "\"start,event=itimer,interval=1ms\"" >/dev/null || return 1
  sleep "$WINDOW_S"
  jcmd "$PID" JVMTI.agent_load "$AP_LIB" "\"stop,file=$PROFILES/probes-$TAG-$N.html\"" >/dev/null
  jcmd "$PID" JVMTI.agent_load "$AP_LIB" "\"flat=40,traces=0,file=$PROFILES/probes-$TAG-$N.txt\"" >/dev/null
  jcmd "$PID" JVMTI.agent_load "$AP_LIB" "\"collapsed,file=$OUT/probes-$TAG-$N.collapsed\"" >/dev/null
}
stop_pid() { kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null; PID=""; }

vigil 1000 && window vigil-profile "$PID" profile; stop_pid
vigil "$STRACE_INTERVAL_MS" && window vigil-strace "$PID" trace "$PID" "$OUT/strace-vigil-$TAG.txt"; stop_pid
if [ "$HAPROXY" != 0 ] && command -v haproxy >/dev/null; then
  haproxy_run 1000 && window haproxy-plain "$PID"; stop_pid
  haproxy_run "$STRACE_INTERVAL_MS" && window haproxy-strace "$PID" trace "$PID" "$OUT/strace-haproxy-$TAG.txt"; stop_pid
fi
kill "$FARM" 2>/dev/null; wait "$FARM" 2>/dev/null; FARM=""

python3 - "$OUT" "$TAG" "$N" "$WINDOW_S" "$(getconf CLK_TCK)" "$STRACE_INTERVAL_MS" >"$PROFILES/syscalls-$TAG.md" <<'EOF'
import os, re, sys
out, tag, n, window_s, hz, strace_ms = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5]), sys.argv[6]
windows = {}
for line in open(os.path.join(out, "windows-%s.txt" % tag)):
    name, probes, ticks, secs = line.split()
    windows[name] = (int(probes), int(ticks), float(secs))
GROUPS = [
    ("socket", {"socket"}),
    ("connect", {"connect"}),
    ("setsockopt/getsockopt", {"setsockopt", "getsockopt"}),
    ("epoll_ctl", {"epoll_ctl"}),
    ("epoll_wait (wake-ups)", {"epoll_wait", "epoll_pwait", "epoll_pwait2"}),
    ("reads", {"read", "recvfrom", "recvmsg", "readv"}),
    ("writes", {"write", "sendto", "sendmsg", "writev"}),
    ("close/shutdown", {"close", "shutdown"}),
    ("futex", {"futex"}),
]
def parse(path):
    calls = {}
    if not os.path.exists(path):
        return None
    for line in open(path):
        f = line.split()
        if len(f) >= 5 and re.match(r"^[0-9.]+$", f[0]) and f[-1] != "total":
            calls[f[-1]] = calls.get(f[-1], 0) + int(f[3])
    return calls
who = [("Vigil", "vigil"), ("HAProxy", "haproxy")]
data = {}
for label, key in who:
    c = parse(os.path.join(out, "strace-%s-%s.txt" % (key, tag)))
    if c is not None and key + "-strace" in windows:
        data[label] = (c, windows[key + "-strace"][0])
print("# Syscalls per probe, %s (N=%d, interval 1 s, fresh connection, %s s windows)\n" % (tag, n, window_s))
print("`TAG=%s bench/profile-probes.sh`: `strace -c -f -p PID` over one window per checker, each alone on" % tag)
print("the farm, probes counted by the farm in the same window. The strace windows run at interval %s ms" % strace_ms)
print("(%d probes/s): at 1,000 probes/s and more ptrace's stops slow the JVM until its probes time out, which" % (n * 1000 // int(strace_ms)))
print("changes what a probe does. The CPU table below is at interval 1 s without strace.\n")
cols = [l for l, _ in who if l in data]
print("| syscall | " + " | ".join(cols) + " |")
print("|---|" + "---|" * len(cols))
rows = []
for g, names in GROUPS:
    rows.append((g, [sum(v for k, v in data[c][0].items() if k in names) for c in cols]))
known = set().union(*[s for _, s in GROUPS])
rows.append(("others", [sum(v for k, v in data[c][0].items() if k not in known) for c in cols]))
rows.append(("**total**", [sum(data[c][0].values()) for c in cols]))
for g, vals in rows:
    print("| %s | %s |" % (g, " | ".join("%.2f" % (v / max(1, data[c][1])) for c, v in zip(cols, vals))))
print("| probes in the strace window | " + " | ".join(str(data[c][1]) for c in cols) + " |")
print("\nOthers, per probe (top 8):\n")
for c in cols:
    others = sorted(((v, k) for k, v in data[c][0].items() if k not in known), reverse=True)[:8]
    print("- %s: %s" % (c, ", ".join("%s %.3f" % (k, v / max(1, data[c][1])) for v, k in others)))
print("\nCPU without strace (utime+stime of the PID over a window of the same length):\n")
print("| checker | window | probes | CPU s | CPU s per 1,000 probes |")
print("|---|---|---|---|---|")
for name in ("vigil-profile", "haproxy-plain"):
    if name in windows:
        p, t, s = windows[name]
        print("| %s | %s | %d | %.2f | %.4f |" % (name.split("-")[0], name, p, t / hz, t / hz / max(1, p) * 1000))
print("\n(The Vigil window runs under async-profiler at 1 ms itimer: a few per cent of overhead.)")
EOF
cat "$PROFILES/syscalls-$TAG.md"
