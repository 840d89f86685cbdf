#!/usr/bin/env bash
# Vigil end-to-end test hosts: network namespaces on a private bridge, with
# addresses from 198.18.0.0/15 (RFC 2544, reserved for network testing).
#
#   e2e/netns.sh up N     create hosts vigil-h1..vigil-hN (runs 'down' first)
#   e2e/netns.sh down     delete every vigil-h* namespace and the bridge (idempotent)
#   e2e/netns.sh addr I   print the address of host I (198.18.0.<10+I>)
#   e2e/netns.sh status   list the hosts and their addresses
#
# Layout:
#   root namespace: bridge vigil-br0 = 198.18.0.1/24
#   host I:         namespace vigil-hI, interface eth0 = 198.18.0.<10+I>/24, lo up,
#                   veth peer vigil-hI-r enslaved to vigil-br0 in the root namespace.
# The hosts have no default route and IP forwarding is not touched, so a host
# can reach only 198.18.0.0/24 (the bridge and the other hosts) and its own
# loopback; the root namespace reaches the hosts through vigil-br0.
# 'up' also installs iptables when missing (QuorumE2E's faults: rules on a checker's source
# address, which it adds to vigil-br0 itself); 'down' deletes any such rule a test left.
# Needs root (CI runs as root). Use 'down' from a trap to clean up on failure:
#   trap 'e2e/netns.sh down' EXIT
set -euo pipefail

BRIDGE=vigil-br0
PREFIX=vigil-h
NET=198.18.0
BRIDGE_ADDR="$NET.1"
FIRST_HOST=10   # host I gets $NET.(FIRST_HOST+I)
MAX_HOSTS=200

log() { echo "[netns] $*" >&2; }
die() { echo "[netns] ERROR: $*" >&2; exit 1; }

need_ip() {
  [ "$(id -u)" = 0 ] || die "must run as root"
  if ! command -v ip >/dev/null; then
    log "installing iproute2"
    timeout 300 apt-get install -y -q iproute2 >/dev/null || {
      timeout 300 apt-get update -q >/dev/null && timeout 300 apt-get install -y -q iproute2 >/dev/null
    } || die "could not install iproute2"
  fi
}

need_iptables() { # QuorumE2E cuts one checker's path with iptables rules on its source address
  command -v iptables >/dev/null && return 0
  log "installing iptables (for QuorumE2E's faults)"
  timeout 300 apt-get install -y -q iptables >/dev/null 2>&1 || {
    timeout 300 apt-get update -q >/dev/null 2>&1 && timeout 300 apt-get install -y -q iptables >/dev/null 2>&1
  } || true
  command -v iptables >/dev/null || log "no iptables: QuorumE2E will fail saying so"
}

# Rules QuorumE2E tags (CheckerNetwork.TAG) that a crashed test JVM left in OUTPUT.
drop_tagged_rules() {
  command -v iptables >/dev/null || return 0
  local rule
  { iptables -S OUTPUT 2>/dev/null || true; } | { grep -- "vigil-e2e-checker" || true; } | sed 's/^-A /-D /' | while read -r rule; do
    # shellcheck disable=SC2086 # the rule's words, as iptables -S printed them
    iptables -w 5 $rule 2>/dev/null || true
  done
}

need_ping() { # used only to check reachability after 'up'; optional
  command -v ping >/dev/null && return 0
  log "installing iputils-ping (for the reachability check)"
  timeout 300 apt-get install -y -q iputils-ping >/dev/null 2>&1 || true
  command -v ping >/dev/null || log "no ping: skipping the reachability check"
}

host_addr() { echo "$NET.$((FIRST_HOST + $1))"; }

our_namespaces() {
  ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${PREFIX}[0-9]+$" || true
}

cmd_down() {
  need_ip
  local ns pids i
  for ns in $(our_namespaces); do
    # processes started inside our own test hosts (test backends)
    pids="$(ip netns pids "$ns" 2>/dev/null || true)"
    if [ -n "$pids" ]; then
      log "stopping processes in $ns: $(echo $pids)"
      kill -TERM $pids 2>/dev/null || true
      for i in $(seq 1 50); do # at most 5 s
        [ -z "$(ip netns pids "$ns" 2>/dev/null || true)" ] && break
        sleep 0.1
      done
      pids="$(ip netns pids "$ns" 2>/dev/null || true)"
      [ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
    fi
    ip netns delete "$ns" 2>/dev/null || true
  done
  # root-side veth ends vanish with their peers; delete any left over
  for ns in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1 | grep -E "^${PREFIX}[0-9]+-r$" || true); do
    ip link delete "$ns" 2>/dev/null || true
  done
  if ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link delete "$BRIDGE" type bridge 2>/dev/null || true
  fi
  drop_tagged_rules
  log "down"
}

cmd_up() {
  local n="${1:-}" i ns addr
  [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le "$MAX_HOSTS" ] || die "usage: $0 up N (1..$MAX_HOSTS)"
  need_ip
  cmd_down
  trap 'log "up failed, tearing down"; cmd_down' ERR
  ip link add "$BRIDGE" type bridge
  echo 1 >"/proc/sys/net/ipv6/conf/$BRIDGE/disable_ipv6" 2>/dev/null || true
  ip addr add "$BRIDGE_ADDR/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  for i in $(seq 1 "$n"); do
    ns="$PREFIX$i"
    addr="$(host_addr "$i")"
    ip netns add "$ns"
    ip link add "$ns-r" type veth peer name "vh$i-tmp"
    ip link set "vh$i-tmp" netns "$ns"
    ip -n "$ns" link set "vh$i-tmp" name eth0
    ip netns exec "$ns" sh -c 'echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6' 2>/dev/null || true
    ip -n "$ns" addr add "$addr/24" dev eth0
    ip -n "$ns" link set lo up
    ip -n "$ns" link set eth0 up
    ip link set "$ns-r" master "$BRIDGE"
    ip link set "$ns-r" up
  done
  need_ping
  need_iptables
  # wait (bounded) until every host answers on its address from the root namespace
  for i in $(seq 1 "$n"); do
    addr="$(host_addr "$i")"
    local ok=0
    for _ in $(seq 1 50); do # at most ~10 s per host
      if ip netns exec "$PREFIX$i" ip -4 addr show dev eth0 | grep -q "inet $addr/" \
         && ping -c1 -W1 "$addr" >/dev/null 2>&1; then ok=1; break; fi
      command -v ping >/dev/null || { ok=1; break; } # no ping installed: trust the link state
      sleep 0.2
    done
    [ "$ok" = 1 ] || die "host $PREFIX$i ($addr) not reachable from the root namespace"
  done
  trap - ERR
  log "up: $n host(s) on $BRIDGE ($BRIDGE_ADDR/24): $(for i in $(seq 1 "$n"); do printf '%s=%s ' "$PREFIX$i" "$(host_addr "$i")"; done)"
}

cmd_status() {
  local ns
  ip -4 -br addr show dev "$BRIDGE" 2>/dev/null || echo "$BRIDGE: absent"
  for ns in $(our_namespaces); do
    echo "$ns $(ip -n "$ns" -4 -br addr show dev eth0 2>/dev/null | awk '{print $3}')"
  done
}

case "${1:-}" in
  up) cmd_up "${2:-}" ;;
  down) cmd_down ;;
  addr) [[ "${2:-}" =~ ^[0-9]+$ ]] || die "usage: $0 addr I"; host_addr "$2" ;;
  status) cmd_status ;;
  *) echo "usage: $0 up N|down|addr I|status" >&2; exit 2 ;;
esac
