# Sourced by the bench/ scripts.
#
# `require CMD[:PACKAGE] ...` installs the Debian packages of the
# commands that are missing, with apt-get (root), the way deploy/image/build.sh and e2e/netns.sh do
# (apt-get update only when the first install fails). Each is bounded by a timeout. A service that
# a package starts (haproxy, nginx) is stopped again through its own init script: the bench starts
# its own instances and stops them by PID.
require() {
  local spec cmd pkg missing=()
  for spec in "$@"; do
    cmd=${spec%%:*}
    pkg=${spec#*:}
    command -v "$cmd" >/dev/null 2>&1 || missing+=("$pkg")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  [ "$(id -u)" = 0 ] || { echo "bench: missing ${missing[*]}; install them (apt-get install ${missing[*]})" >&2; return 1; }
  echo "bench: apt-get install ${missing[*]}" >&2
  timeout 600 env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >&2 || {
    timeout 300 apt-get update -q >&2 &&
      timeout 600 env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >&2
  } || { echo "bench: could not install ${missing[*]}" >&2; return 1; }
  for pkg in "${missing[@]}"; do
    case "$pkg" in
      haproxy | nginx*) [ -x "/etc/init.d/${pkg%%-*}" ] && "/etc/init.d/${pkg%%-*}" stop >/dev/null 2>&1 ;;
    esac
  done
  return 0
}

# `classpath OUT`: compiles the operator and its test classes (Maven resolves what it needs, so a
# clean clone works) and sets CP to them and their test-scope dependencies (list in OUT/cp.txt).
# With BENCH_CP_FILE (a cp.txt of an earlier build, as bench/probe-targets.sh passes on) it only reuses it.
classpath() {
  if [ -n "${BENCH_CP_FILE:-}" ]; then
    [ "$BENCH_CP_FILE" -ef "$1/cp.txt" ] || cp "$BENCH_CP_FILE" "$1/cp.txt"
    CP="$ROOT/operator/target/classes:$ROOT/operator/target/test-classes:$(cat "$1/cp.txt")"
    return 0
  fi
  echo "building (test classes + classpath)" >&2
  (cd "$ROOT" && mvn -B -q -pl operator test-compile dependency:build-classpath \
      -Dmdep.includeScope=test -Dmdep.outputFile="$1/cp.txt") || return 1
  CP="$ROOT/operator/target/classes:$ROOT/operator/target/test-classes:$(cat "$1/cp.txt")"
}

# `untrack MATCH...`: netfilter's connection tracking skips the packets each nft MATCH names (the
# farm's, both directions) while the script runs: a table of its own (inet vigil_bench_PID, output
# hook at raw priority, `notrack`), deleted by `untrack_end`, which the scripts call on exit. Without
# it, one checker's connections leave TIME_WAIT entries (120 s each; about a million after a
# ramp) that slow the connects of whichever checker runs next: at 20,000 probes/s HAProxy spent
# 0.065 CPU s per 1,000 probes when it ran first and 0.091 right after Vigil, Vigil 0.083 first and
# 0.105 after HAProxy (single runs of `INTERS=250 CHECKERS=... bench/probe-ramp.sh`). Returns 1,
# and tracking stays on, with CONNTRACK=1, without root, or when nft (nftables) cannot be installed;
# a no-op where tracking is not loaded.
untrack() {
  UNTRACKED=""
  [ -r /proc/sys/net/netfilter/nf_conntrack_count ] || return 0
  [ "${CONNTRACK:-0}" = 1 ] && return 1
  [ "$(id -u)" = 0 ] && require nft:nftables || {
    echo "bench: connection tracking stays on for the farm (needs root and nft)" >&2
    return 1
  }
  local table="vigil_bench_$$" m rules=""
  for m in "$@"; do rules="$rules    $m notrack
"; done
  nft -f - <<EOF || { echo "bench: nft refused the notrack table; connection tracking stays on" >&2; return 1; }
table inet $table {
  chain out {
    type filter hook output priority raw; policy accept;
$rules  }
}
EOF
  UNTRACKED=$table
  echo "bench: connection tracking off for the farm (nft table inet $table; CONNTRACK=1 keeps it)" >&2
}

untrack_end() {
  [ -n "${UNTRACKED:-}" ] && nft delete table inet "$UNTRACKED" 2>/dev/null
  UNTRACKED=""
}

# `conntrack_check RATE`: where netfilter's connection tracking is loaded (kube-proxy, nftables,
# e2e/ on this machine load it), every loopback connection takes a conntrack entry for the TIME_WAIT
# timeout (120 s): a fresh connection per probe at RATE/s needs RATE x 120 entries, and a full
# table drops SYNs ("nf_conntrack: table full, dropping packet" in dmesg): connects time out, for
# the checkers and for the farm's control port alike. Warns with the sysctl that makes room.
conntrack_check() {
  local max=/proc/sys/net/netfilter/nf_conntrack_max tw=/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_time_wait
  [ -r "$max" ] || return 0
  local need=$(($1 * $(cat "$tw" 2>/dev/null || echo 120) * 3 / 2))
  [ "$(cat "$max")" -ge "$need" ] && return 0
  echo "bench: WARNING connection tracking is on and nf_conntrack_max=$(cat "$max") < $need ($1 fresh" \
    "connections/s for $(cat "$tw" 2>/dev/null) s, +50 %): loopback SYNs will be dropped when it fills." \
    "Before measuring: sysctl -w net.netfilter.nf_conntrack_max=$need (or lower" \
    "net.netfilter.nf_conntrack_tcp_timeout_time_wait)" >&2
}

# `conntrack_drain [MAX_S]`: waits (at most MAX_S, default 130 s) until netfilter's connection
# tracking holds fewer than 20,000 entries, so a run that follows a ramp (20,000 fresh connections/s,
# each entry kept for the TIME_WAIT timeout, 120 s) does not start on a table of millions. Prints
# what it waited. A no-op where connection tracking is not loaded.
conntrack_drain() {
  local count=/proc/sys/net/netfilter/nf_conntrack_count t0
  [ -r "$count" ] || return 0
  t0=$(date +%s)
  while [ "$(cat "$count")" -ge 20000 ] && [ $(($(date +%s) - t0)) -lt "${1:-130}" ]; do
    sleep 5
  done
  echo "bench: conntrack entries $(cat "$count") after waiting $(($(date +%s) - t0)) s" >&2
}

# farms_start N OUT FARM_OCTET CTL_PORT MAX_SECONDS: N backends of bench/harness/farm.py, as many
# farm processes as it takes (FARM_MAX, default 16,000, a process: a listening socket each, and the
# open-files limit here is 20,000 a process and cannot be raised), farm k on 127.<FARM_OCTET+k>/16
# with control port CTL_PORT-k; their backend lists joined into OUT/backends-N.txt. Sets FARM to
# their PIDs and FARMS to their count. Only farm 0 answers bench_checker.py's control commands:
# with FARMS > 1 the farm-side counts are not available (the callers say so).
farms_start() {
  local n=$1 out=$2 octet=$3 ctl=$4 max_s=$5 left k=0 part
  local per=${FARM_MAX:-16000}
  : >"$out/backends-$n.txt"
  left=$n; FARM=""
  while [ "$left" -gt 0 ]; do
    part=$(( left < per ? left : per ))
    python3 "$BENCH/farm.py" -n "$part" --layout ips --ip-second-octet $((octet + k)) --base-port 8080 \
        --backlog 1024 --ctl-port $((ctl - k)) --max-seconds "$max_s" \
        --backends-file "$out/backends-$n-$k.txt" 2>"$out/farm-$n-$k.err" &
    FARM="$FARM $!"
    for _ in $(seq 100); do python3 "$BENCH/farmctl.py" --ctl-port $((ctl - k)) ping >/dev/null 2>&1 && break; sleep 0.2; done
    cat "$out/backends-$n-$k.txt" >>"$out/backends-$n.txt"
    left=$((left - part)); k=$((k + 1))
  done
  FARMS=$k
}
