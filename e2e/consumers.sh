#!/usr/bin/env bash
# Consumers of Vigil's EndpointSlices on the e2e control plane (issue 20): kube-proxy acting as a
# Node inside a test host, and Traefik with its Kubernetes Ingress provider. Both read the slices
# the way they do in a real cluster; e2e/traffic.py sends real requests through them.
#
#   e2e/consumers.sh kube-proxy start [HOST]   kube-proxy as Node vigil-h<HOST> (default 1), in
#                                              that host's network namespace, nftables mode
#   e2e/consumers.sh kube-proxy stop
#   e2e/consumers.sh traefik start             Traefik on 127.0.0.1 (root namespace), all namespaces;
#                                              with VIGIL_E2E_TRAEFIK_OTLP_ENDPOINT (below) it also
#                                              exports its access log to Vigil over OTLP
#   e2e/consumers.sh traefik stop
#   e2e/consumers.sh stop                      both (idempotent; fine in a trap)
#   e2e/consumers.sh env                       shell exports: VIGIL_E2E_KUBE_PROXY_HOST,
#                                              VIGIL_E2E_TRAEFIK_URL, VIGIL_E2E_SERVICE_CIDR
#
# Needs the control plane (e2e/control-plane.sh start) and the test hosts (e2e/netns.sh up N);
# the binaries come from 'e2e/control-plane.sh build kube-proxy traefik'. State and logs are in
# $VIGIL_E2E_STATE/consumers (logs/kube-proxy.log, logs/traefik.log).
#
# kube-proxy: a Node object vigil-h<HOST> (InternalIP = the host's address), ServiceAccount
# kube-system/kube-proxy bound to the bootstrap ClusterRole system:node-proxier, a kubeconfig with
# that ServiceAccount's token; it runs under 'ip netns exec vigil-h<HOST>', so its nftables rules
# exist only in that namespace, and reaches the API server (127.0.0.1 in the root namespace)
# through e2e/relay.py on the bridge address. The host gets a route for the Service CIDR (as a
# node's default route would carry it) so a client there can connect to a ClusterIP at all.
#
# Traefik: ServiceAccount kube-system/traefik with a ClusterRole of what its Ingress provider
# reads (Services, EndpointSlices, Secrets, Nodes, Ingresses, IngressClasses; Ingress status),
# an IngressClass 'traefik', entry point 'web' on 127.0.0.1:<free port>, ping on another.
#
# Traefik's access log over OTLP to Vigil's outcome port (issue 33; docs/reporters.md), when these
# are in the environment of 'traefik start' (without them Traefik writes no access log at all):
#   VIGIL_E2E_TRAEFIK_OTLP_ENDPOINT  host:port of the outcome port (e.g. 127.0.0.1:8443)
#   VIGIL_E2E_TRAEFIK_OTLP_CA        the CA file of that port's certificate (required with it)
#   VIGIL_E2E_TRAEFIK_OTLP_PROTOCOL  grpc (default: OTLP/gRPC) or http (OTLP/HTTP, POST /v1/logs)
#   VIGIL_E2E_TRAEFIK_OTLP_AUDIENCE  the token's audience (default vigil.dev)
# The token is kube-system/traefik's, minted for that audience (2 h): bind that ServiceAccount to
# the ClusterRole vigil-outcome-reporter in each namespace whose pools Traefik reports for. The
# same as flags: --experimental.otlplogs=true --accesslog.otlp=true
# --accesslog.otlp.grpc.endpoint=HOST:PORT --accesslog.otlp.grpc.tls.ca=FILE
# --accesslog.otlp.grpc.headers.authorization='Bearer TOKEN' (http: --accesslog.otlp.http.*, the
# endpoint https://HOST:PORT/v1/logs).
set -euo pipefail
cd "$(dirname "$0")/.."

log() { echo "[consumers] $*" >&2; }
die() { echo "[consumers] ERROR: $*" >&2; exit 1; }

if cp_env="$(e2e/control-plane.sh env 2>/dev/null)"; then eval "$cp_env"; fi
need_control_plane() {
  [ -n "${VIGIL_E2E_APISERVER:-}" ] || die "the control plane is not running (e2e/control-plane.sh start)"
}
TRAEFIK_BIN="$(e2e/control-plane.sh traefik-bindir)"
DIR="${VIGIL_E2E_STATE:-${VIGIL_E2E_CACHE:-$HOME/.cache/vigil-e2e}/state}/consumers"
LOGS="$DIR/logs"
TIMEOUT="${VIGIL_E2E_TIMEOUT:-120}"
BRIDGE_ADDR=198.18.0.1
mkdir -p "$DIR" "$LOGS"
chmod 700 "$DIR"

kubectl() { "$VIGIL_E2E_BIN/kubectl" --kubeconfig "$VIGIL_E2E_KUBECONFIG" "$@"; }

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# alive NAME: the pid in $DIR/NAME.pid is alive
alive() {
  local f="$DIR/$1.pid"
  [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null
}

stop_one() {
  local name="$1" pid
  if alive "$name"; then
    pid="$(cat "$DIR/$name.pid")"
    log "stopping $name (pid $pid)"
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$DIR/$name.pid"
}

# wait_for SECONDS WHAT NAME -- COMMAND...: until COMMAND succeeds; fails if NAME died
wait_for() {
  local secs="$1" what="$2" name="$3" deadline
  shift 4
  deadline=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    if ! alive "$name"; then tail -n 40 "$LOGS/$name.log" >&2 || true; die "$name exited while waiting for $what"; fi
    if [ "$SECONDS" -ge "$deadline" ]; then tail -n 40 "$LOGS/$name.log" >&2 || true; die "timed out after ${secs}s waiting for $what"; fi
    sleep 0.5
  done
}

service_cidr() { # the cluster's Service CIDR, from the API server's default ServiceCIDR object
  local cidr
  cidr="$(kubectl get servicecidr kubernetes -o jsonpath='{.spec.cidrs[0]}' 2>/dev/null || true)"
  echo "${cidr:-198.19.255.0/24}"
}

kubeconfig_for() { # kubeconfig_for SERVER TOKEN_FILE SERVER_NAME
  cat <<EOF
apiVersion: v1
kind: Config
clusters:
- name: vigil-e2e
  cluster:
    server: $1
    certificate-authority-data: $(base64 -w0 <"$VIGIL_E2E_CA_FILE")
    tls-server-name: $3
users:
- name: sa
  user:
    tokenFile: $2
contexts:
- name: vigil-e2e
  context: {cluster: vigil-e2e, user: sa}
current-context: vigil-e2e
EOF
}

# ---- kube-proxy ------------------------------------------------------------------------------
kube_proxy_start() {
  local host="${1:-1}" ns addr apiport relayport cidr
  need_control_plane
  ns="vigil-h$host"
  addr="198.18.0.$((10 + host))"
  [ -x "$VIGIL_E2E_BIN/kube-proxy" ] || die "no $VIGIL_E2E_BIN/kube-proxy: run 'e2e/control-plane.sh build kube-proxy'"
  ip netns list | grep -qw "$ns" || die "no test host $ns: run 'e2e/netns.sh up N'"
  command -v nft >/dev/null || {
    log "installing nftables"
    timeout 300 apt-get install -y -q nftables >/dev/null 2>&1 || {
      timeout 300 apt-get update -q >/dev/null && timeout 300 apt-get install -y -q nftables >/dev/null
    } || die "could not install nftables"
  }
  kube_proxy_stop
  kubectl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: ServiceAccount
metadata: {name: kube-proxy, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: vigil-e2e-kube-proxy}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: system:node-proxier}
subjects:
- {kind: ServiceAccount, name: kube-proxy, namespace: kube-system}
---
apiVersion: v1
kind: Node
metadata:
  name: $ns
  labels: {kubernetes.io/hostname: $ns, kubernetes.io/os: linux}
EOF
  kubectl patch node "$ns" --subresource=status --type=merge \
    -p "{\"status\":{\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"$addr\"},{\"type\":\"Hostname\",\"address\":\"$ns\"}]}}" >/dev/null
  kubectl create token kube-proxy -n kube-system --duration 2h >"$DIR/kube-proxy.token"
  chmod 600 "$DIR/kube-proxy.token"

  # the API server, reachable from the host through the bridge
  apiport="${VIGIL_E2E_APISERVER##*:}"
  setsid python3 e2e/relay.py "$BRIDGE_ADDR" 127.0.0.1 "$apiport" 7200 \
    </dev/null >"$DIR/relay.out" 2>"$LOGS/relay.log" &
  echo $! >"$DIR/relay.pid"
  for _ in $(seq 1 50); do [ -s "$DIR/relay.out" ] && break; sleep 0.1; done
  relayport="$(head -n1 "$DIR/relay.out")"
  [ -n "$relayport" ] || die "the API relay did not start: $(cat "$LOGS/relay.log")"
  kubeconfig_for "https://$BRIDGE_ADDR:$relayport" "$DIR/kube-proxy.token" localhost >"$DIR/kube-proxy.kubeconfig"
  chmod 600 "$DIR/kube-proxy.kubeconfig"

  cidr="$(service_cidr)"
  ip -n "$ns" route replace "$cidr" dev eth0
  # conntrack: leave the kernel's limits and timeouts alone (0 = do not set)
  cat >"$DIR/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: $DIR/kube-proxy.kubeconfig
hostnameOverride: $ns
mode: nftables
bindAddress: $addr
healthzBindAddress: $addr:10256
metricsBindAddress: 127.0.0.1:10249
nodePortAddresses: ["$addr/32"]
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
EOF
  log "starting kube-proxy as Node $ns ($addr) in netns $ns, nftables mode, Service CIDR $cidr"
  setsid ip netns exec "$ns" "$VIGIL_E2E_BIN/kube-proxy" --config "$DIR/kube-proxy.yaml" --v 2 \
    </dev/null >"$LOGS/kube-proxy.log" 2>&1 &
  echo $! >"$DIR/kube-proxy.pid"
  echo "$host" >"$DIR/kube-proxy.host"
  echo "$cidr" >"$DIR/service.cidr"
  # its table in the host, then /healthz (200 while its rules are in sync with the API server)
  wait_for "$TIMEOUT" "kube-proxy's nftables table" kube-proxy -- \
    ip netns exec "$ns" nft list table ip kube-proxy
  wait_for "$TIMEOUT" "kube-proxy /healthz" kube-proxy -- \
    ip netns exec "$ns" curl -fsS --max-time 2 "http://$addr:10256/healthz"
  log "kube-proxy ready (rules: ip netns exec $ns nft list table ip kube-proxy)"
}

kube_proxy_stop() {
  local host
  stop_one kube-proxy
  stop_one relay
  if [ -f "$DIR/kube-proxy.host" ]; then
    host="$(cat "$DIR/kube-proxy.host")"
    # kube-proxy leaves its table behind when killed; it is only in the test host
    ip netns exec "vigil-h$host" nft delete table ip kube-proxy 2>/dev/null || true
    ip netns exec "vigil-h$host" nft delete table ip6 kube-proxy 2>/dev/null || true
    rm -f "$DIR/kube-proxy.host"
  fi
}

# ---- Traefik ---------------------------------------------------------------------------------
# traefik_otlp_config: the static configuration that sends the access log to Vigil over OTLP, or
# nothing when VIGIL_E2E_TRAEFIK_OTLP_ENDPOINT is not set
traefik_otlp_config() {
  local endpoint="${VIGIL_E2E_TRAEFIK_OTLP_ENDPOINT:-}" protocol="${VIGIL_E2E_TRAEFIK_OTLP_PROTOCOL:-grpc}"
  local ca="${VIGIL_E2E_TRAEFIK_OTLP_CA:-}" audience="${VIGIL_E2E_TRAEFIK_OTLP_AUDIENCE:-vigil.dev}"
  [ -n "$endpoint" ] || return 0
  [ -f "$ca" ] || die "VIGIL_E2E_TRAEFIK_OTLP_CA must name the CA file of $endpoint's certificate"
  case "$protocol" in
    grpc) ;;
    http) endpoint="https://$endpoint/v1/logs" ;;
    *) die "VIGIL_E2E_TRAEFIK_OTLP_PROTOCOL must be grpc or http, not '$protocol'" ;;
  esac
  kubectl create token traefik -n kube-system --audience "$audience" --duration 2h >"$DIR/traefik-otlp.token"
  chmod 600 "$DIR/traefik-otlp.token"
  log "traefik exports its access log over OTLP/$protocol to $endpoint (token audience $audience)"
  cat <<EOF
experimental: {otlplogs: true}
accessLog:
  otlp:
    $protocol:
      endpoint: "$endpoint"
      tls: {ca: "$ca"}
      headers: {authorization: "Bearer $(cat "$DIR/traefik-otlp.token")"}
EOF
}

traefik_start() {
  local web ping otlp
  need_control_plane
  [ -x "$TRAEFIK_BIN/traefik" ] || die "no $TRAEFIK_BIN/traefik: run 'e2e/control-plane.sh build traefik'"
  traefik_stop
  kubectl apply -f - >/dev/null <<'EOF'
apiVersion: v1
kind: ServiceAccount
metadata: {name: traefik, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: vigil-e2e-traefik}
rules:
- apiGroups: [""]
  resources: [services, secrets, nodes]
  verbs: [get, list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list, watch]
- apiGroups: [networking.k8s.io]
  resources: [ingresses, ingressclasses]
  verbs: [get, list, watch]
- apiGroups: [networking.k8s.io]
  resources: [ingresses/status]
  verbs: [update]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: vigil-e2e-traefik}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: vigil-e2e-traefik}
subjects:
- {kind: ServiceAccount, name: traefik, namespace: kube-system}
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: traefik}
spec: {controller: traefik.io/ingress-controller}
EOF
  kubectl create token traefik -n kube-system --duration 2h >"$DIR/traefik.token"
  chmod 600 "$DIR/traefik.token"
  web="$(free_port)"; ping="$(free_port)"
  otlp="$(traefik_otlp_config)"
  cat >"$DIR/traefik.yaml" <<EOF
entryPoints:
  web: {address: "127.0.0.1:$web"}
  traefik: {address: "127.0.0.1:$ping"}
ping: {entryPoint: traefik}
log: {level: INFO}
global: {checkNewVersion: false, sendAnonymousUsage: false}
providers:
  kubernetesIngress:
    endpoint: "$VIGIL_E2E_APISERVER"
    token: "$(cat "$DIR/traefik.token")"
    certAuthFilePath: "$VIGIL_E2E_CA_FILE"
    ingressClass: traefik
    allowEmptyServices: true
$otlp
EOF
  chmod 600 "$DIR/traefik.yaml"
  log "starting traefik on 127.0.0.1:$web (ping 127.0.0.1:$ping)"
  setsid "$TRAEFIK_BIN/traefik" --configFile "$DIR/traefik.yaml" </dev/null >"$LOGS/traefik.log" 2>&1 &
  echo $! >"$DIR/traefik.pid"
  echo "http://127.0.0.1:$web" >"$DIR/traefik.url"
  wait_for "$TIMEOUT" "traefik /ping" traefik -- curl -fsS --max-time 2 "http://127.0.0.1:$ping/ping"
  log "traefik ready: $(cat "$DIR/traefik.url")"
}

traefik_stop() {
  stop_one traefik
  rm -f "$DIR/traefik.url" "$DIR/traefik-otlp.token"
}

cmd_env() {
  [ -f "$DIR/kube-proxy.host" ] && alive kube-proxy && {
    echo "export VIGIL_E2E_KUBE_PROXY_HOST='$(cat "$DIR/kube-proxy.host")'"
    echo "export VIGIL_E2E_SERVICE_CIDR='$(cat "$DIR/service.cidr")'"
  }
  [ -f "$DIR/traefik.url" ] && alive traefik && echo "export VIGIL_E2E_TRAEFIK_URL='$(cat "$DIR/traefik.url")'"
  return 0
}

case "${1:-} ${2:-}" in
  "kube-proxy start") kube_proxy_start "${3:-1}" ;;
  "kube-proxy stop") kube_proxy_stop ;;
  "traefik start") traefik_start ;;
  "traefik stop") traefik_stop ;;
  "stop "*) kube_proxy_stop; traefik_stop ;;
  "env "*) cmd_env ;;
  *) echo "usage: $0 kube-proxy start [HOST]|kube-proxy stop|traefik start|traefik stop|stop|env" >&2; exit 2 ;;
esac
