#!/usr/bin/env bash
# Vigil end-to-end harness: a real Kubernetes control plane (etcd + kube-apiserver,
# no kubelet, no controller-manager, no scheduler), built here from Go modules.
#
#   e2e/control-plane.sh build [kubernetes|etcd|helm|promtool|olm]...
#                                build pinned kube-apiserver, kubectl, etcd, helm into the cache (reused);
#                                promtool and bundle-validate (e2e/bundle-validate) go to directories
#                                of their own, keyed by their versions
#   e2e/control-plane.sh tool promtool|bundle-validate
#                                print the path of a built tool (fails naming the build command)
#   e2e/control-plane.sh start   start etcd + kube-apiserver on 127.0.0.1, write an admin kubeconfig
#   e2e/control-plane.sh stop    stop both (idempotent)
#   e2e/control-plane.sh env     print shell exports (VIGIL_E2E_KUBECONFIG, KUBECONFIG, PATH, ...)
#   e2e/control-plane.sh status  say whether it is running and ready
#   e2e/control-plane.sh bindir  print the directory holding the binaries
#
# Environment:
#   VIGIL_E2E_CACHE   cache root (default: $HOME/.cache/vigil-e2e)
#   VIGIL_E2E_STATE   state dir for certs, data, logs, kubeconfig (default: $VIGIL_E2E_CACHE/state)
#   VIGIL_E2E_TIMEOUT seconds to wait for readiness (default: 120)
set -euo pipefail

# ---- pinned versions -------------------------------------------------------
K8S_VERSION=v1.37.2          # k8s.io/kubernetes; staging modules at v0.37.2
ETCD_VERSION=v3.7.3          # go.etcd.io/etcd/server/v3
HELM_VERSION=v3.22.0         # helm.sh/helm/v3
PROMTOOL_VERSION=v0.316.0    # github.com/prometheus/prometheus (Prometheus 3.16.0): promtool
OLM_API_VERSION=v0.36.0      # github.com/operator-framework/api: e2e/bundle-validate
TRAEFIK_VERSION=v3.7.13      # github.com/traefik/traefik/v3 (the consumer tests, e2e/consumers.sh)
# The staging modules that k8s.io/kubernetes's go.mod lists as v0.0.0 with a
# replace to ./staging/src/...; we pin each one to the published v0.Y.Z.
K8S_STAGING_MODULES="api apiextensions-apiserver apimachinery apiserver cli-runtime client-go
cloud-provider cluster-bootstrap code-generator component-base component-helpers controller-manager
cri-api cri-client cri-streaming csi-translation-lib dynamic-resource-allocation endpointslice externaljwt
kms kube-aggregator kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics mount-utils
pod-security-admission sample-apiserver streaming"

CACHE="${VIGIL_E2E_CACHE:-$HOME/.cache/vigil-e2e}"
BIN="$CACHE/bin-k8s${K8S_VERSION}-etcd${ETCD_VERSION}-helm${HELM_VERSION}"
STATE="${VIGIL_E2E_STATE:-$CACHE/state}"
# Tools the tests run but the control plane does not need, each in a directory keyed by its own
# version (pinning a new one never throws the hour-long Kubernetes build away). bundle-validate is
# Vigil's own source: its directory is keyed by the source's hash too.
E2E_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PROMTOOL_BIN="$CACHE/bin-promtool$PROMTOOL_VERSION"
OLM_SRC_HASH="$(sha256sum <"$E2E_DIR/bundle-validate/main.go" 2>/dev/null | cut -c1-12)"
OLM_BIN="$CACHE/bin-olm-api$OLM_API_VERSION-$OLM_SRC_HASH"
TRAEFIK_BIN="$CACHE/bin-traefik${TRAEFIK_VERSION}"
TIMEOUT="${VIGIL_E2E_TIMEOUT:-120}"

log() { echo "[control-plane] $*" >&2; }
die() { echo "[control-plane] ERROR: $*" >&2; exit 1; }

# ---- build -----------------------------------------------------------------
staging_minor() { # v1.37.2 -> v0.37.2
  echo "v0.${K8S_VERSION#v1.}"
}

go_build_env() {
  export GOFLAGS=-mod=mod CGO_ENABLED=0 GOWORK=off
  export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"
}

# k8s_go_mod NAME: a go.mod requiring k8s.io/kubernetes with every staging module pinned
k8s_go_mod() {
  local sv m
  sv="$(staging_minor)"
  echo "module vigil.local/e2e-build/$1"
  echo
  echo "go 1.26.0"
  echo
  echo "require k8s.io/kubernetes $K8S_VERSION"
  echo
  echo "replace ("
  for m in $K8S_STAGING_MODULES; do
    echo "	k8s.io/$m => k8s.io/$m $sv"
  done
  echo ")"
}

# k8s_ldflags: -s -w and the version variables, so the binaries report K8S_VERSION
k8s_ldflags() {
  local major minor date ldflags pkg
  major="${K8S_VERSION#v}"; major="${major%%.*}"
  minor="${K8S_VERSION#v*.}"; minor="${minor%%.*}"
  date="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  ldflags="-s -w"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
    ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.gitCommit=vigil-e2e-module-build -X $pkg.buildDate=$date"
  done
  echo "$ldflags"
}

build_k8s() {
  local dir="$CACHE/build/k8s-$K8S_VERSION" sv
  sv="$(staging_minor)"
  mkdir -p "$dir"
  k8s_go_mod k8s >"$dir/go.mod"
  cat >"$dir/tools.go" <<'EOF'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
EOF
  local ldflags
  ldflags="$(k8s_ldflags)"
  (
    cd "$dir"
    go_build_env
    log "resolving k8s.io/kubernetes $K8S_VERSION (staging modules at $sv)"
    go mod tidy -e >/dev/null 2>"$dir/tidy.log" || { cat "$dir/tidy.log" >&2; exit 1; }
    for cmd in kube-apiserver kubectl; do
      log "building $cmd $K8S_VERSION"
      nice -n 10 go build -trimpath -ldflags "$ldflags" -o "$BIN/.$cmd.tmp" "k8s.io/kubernetes/cmd/$cmd"
      mv "$BIN/.$cmd.tmp" "$BIN/$cmd"
    done
  )
}

# go_module_build DIR NAME MODULE VERSION PKG OUT LDFLAGS: builds PKG into OUT in DIR, a module of
# its own (vigil.local/e2e-build/NAME) that requires MODULE at VERSION. PKG "." builds the main.go
# the caller put in DIR; any other PKG is imported by a tools.go so that go mod tidy keeps it.
go_module_build() {
  local dir=$1 name=$2 module=$3 version=$4 pkg=$5 out=$6 ldflags=$7
  mkdir -p "$dir" "$(dirname "$out")"
  printf '%s\n' "module vigil.local/e2e-build/$name" "" "go 1.26.0" "" \
    "require $module $version" >"$dir/go.mod"
  if [ "$pkg" != . ]; then
    printf '%s\n' "//go:build tools" "" "package tools" "" "import _ \"$pkg\"" >"$dir/tools.go"
  fi
  (
    cd "$dir"
    go_build_env
    log "resolving $module $version"
    go mod tidy -e >/dev/null 2>"$dir/tidy.log" || { cat "$dir/tidy.log" >&2; exit 1; }
    log "building $name ($module $version)"
    nice -n 10 go build -trimpath -ldflags "$ldflags" -o "$(dirname "$out")/.$(basename "$out").tmp" "$pkg"
    mv "$(dirname "$out")/.$(basename "$out").tmp" "$out"
  )
}

build_etcd() {
  go_module_build "$CACHE/build/etcd-$ETCD_VERSION" etcd go.etcd.io/etcd/server/v3 "$ETCD_VERSION" \
    go.etcd.io/etcd/server/v3 "$BIN/etcd" "-s -w"
}

build_helm() {
  go_module_build "$CACHE/build/helm-$HELM_VERSION" helm helm.sh/helm/v3 "$HELM_VERSION" \
    helm.sh/helm/v3/cmd/helm "$BIN/helm" \
    "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
}

# promtool from its own module's go.mod and go.sum (go install pkg@version: exactly the versions
# Prometheus tested), without the cloud service-discovery plugins (tag remove_all_sd: rule checks
# and rule unit tests do not use them).
build_promtool() {
  local dir="$CACHE/build/promtool-$PROMTOOL_VERSION" v pv
  v="${PROMTOOL_VERSION#v0.}" # 316.0
  pv="${v:0:1}.${v:1}"        # 3.16.0
  mkdir -p "$dir" "$PROMTOOL_BIN"
  (
    cd "$dir"
    go_build_env
    export GOFLAGS= GOBIN="$dir/out"
    log "building promtool $PROMTOOL_VERSION (Prometheus $pv)"
    nice -n 10 go install -trimpath -tags remove_all_sd \
      -ldflags "-s -w -X github.com/prometheus/common/version.Version=$pv -X github.com/prometheus/common/version.Branch=module-build" \
      "github.com/prometheus/prometheus/cmd/promtool@$PROMTOOL_VERSION"
    mv "$dir/out/promtool" "$PROMTOOL_BIN/promtool"
  )
}

# e2e/bundle-validate: the operator-framework's bundle validation library in a small program.
build_olm() {
  local dir="$CACHE/build/olm-api-$OLM_API_VERSION"
  [ -f "$E2E_DIR/bundle-validate/main.go" ] || die "no $E2E_DIR/bundle-validate/main.go"
  mkdir -p "$dir"
  cp "$E2E_DIR/bundle-validate/main.go" "$dir/main.go"
  go_module_build "$dir" bundle-validate github.com/operator-framework/api "$OLM_API_VERSION" . \
    "$OLM_BIN/bundle-validate" "-s -w"
}

# cmd_tool promtool|bundle-validate: the path of a built tool
cmd_tool() {
  local path piece
  case "${1:-}" in
    promtool) path="$PROMTOOL_BIN/promtool"; piece=promtool ;;
    bundle-validate) path="$OLM_BIN/bundle-validate"; piece=olm ;;
    *) die "unknown tool '${1:-}' (promtool, bundle-validate)" ;;
  esac
  [ -x "$path" ] || die "$path missing: run '$0 build $piece' first"
  echo "$path"
}


# ---- consumers of the slices: kube-proxy and Traefik (issue 20) ------------
# kube-proxy: k8s.io/kubernetes/cmd/kube-proxy at K8S_VERSION, with the same module graph and
# ldflags as kube-apiserver (so Go's build cache is shared), in a build directory of its own so it
# can build while the kubernetes piece builds. It goes into $BIN beside kube-apiserver, as a piece
# of its own: a cache made before kube-proxy was added builds only kube-proxy.
build_kube_proxy() {
  local dir="$CACHE/build/k8s-$K8S_VERSION-kube-proxy" ldflags
  mkdir -p "$dir"
  k8s_go_mod kube-proxy >"$dir/go.mod"
  cat >"$dir/tools.go" <<'EOF'
//go:build tools

package tools

import _ "k8s.io/kubernetes/cmd/kube-proxy"
EOF
  ldflags="$(k8s_ldflags)"
  (
    cd "$dir"
    go_build_env
    log "resolving k8s.io/kubernetes $K8S_VERSION for kube-proxy"
    go mod tidy -e >/dev/null 2>"$dir/tidy.log" || { cat "$dir/tidy.log" >&2; exit 1; }
    log "building kube-proxy $K8S_VERSION"
    nice -n 10 go build -trimpath -ldflags "$ldflags" -o "$BIN/.kube-proxy.tmp" k8s.io/kubernetes/cmd/kube-proxy
    mv "$BIN/.kube-proxy.tmp" "$BIN/kube-proxy"
  )
}

# Traefik: github.com/traefik/traefik/v3/cmd/traefik at TRAEFIK_VERSION, in its own cache
# directory ($TRAEFIK_BIN, keyed by its version). Three modules it needs are not to be had from
# the module proxy here, so the build differs from upstream's in three places (e2e/README.md):
# - github.com/traefik/traefik/dynamic/ext, a nested module that Traefik's go.mod replaces with a
#   local directory (absent from the published zip, not served): a stand-in with the two
#   extension points package dynamic embeds (ext.HTTP, ext.Router), empty structs;
# - Traefik's fork of github.com/abbot/go-http-auth (version refused, 403): upstream v0.4.0 copied
#   from the module cache, plus the two functions the fork added that Traefik's basic and digest
#   auth middlewares call (CheckSecret: the htpasswd comparison upstream's BasicAuth.CheckAuth
#   does; DigestAuth.RequireAuthStale: a new challenge with stale=true);
# - the SDKs of 13 of lego's ACME DNS-01 providers (versions refused, 403): lego is copied from
#   the module cache with its provider registry replaced by one that knows no DNS provider, so
#   ACME DNS challenges are unavailable in this build (the tests use plain HTTP).
# Traefik's other replace and exclude directives are copied from its go.mod (a dependency's
# directives do not apply to the main module).
build_traefik() {
  local dir="$CACHE/build/traefik-$TRAEFIK_VERSION" upstream
  mkdir -p "$dir/ext" "$TRAEFIK_BIN"
  printf 'module github.com/traefik/traefik/dynamic/ext\n\ngo 1.24.0\n' >"$dir/ext/go.mod"
  cat >"$dir/ext/ext.go" <<'EOF'
// Package ext stands in for github.com/traefik/traefik/dynamic/ext (not served by the module
// proxy): the extension points that package dynamic embeds, empty.
package ext

// HTTP is embedded in dynamic.HTTP.
type HTTP struct{}

// Router is embedded in dynamic.Router.
type Router struct{}
EOF
  cat >"$dir/tools.go" <<'EOF'
//go:build tools

package tools

import _ "github.com/traefik/traefik/v3/cmd/traefik"
EOF
  (
    cd "$dir"
    go_build_env
    log "resolving github.com/traefik/traefik/v3 $TRAEFIK_VERSION"
    printf 'module vigil.local/e2e-build/traefik\n\ngo 1.26.0\n' >go.mod
    upstream="$(GOFLAGS=-mod=mod go mod download -json "github.com/traefik/traefik/v3@$TRAEFIK_VERSION" \
      | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')"
    [ -f "$upstream" ] || { log "no go.mod for traefik $TRAEFIK_VERSION"; exit 1; }
    local lego_version lego_dir
    lego_version="$(awk '$1 == "github.com/go-acme/lego/v5" {print $2; exit}' "$upstream")"
    lego_dir="$(go mod download -json "github.com/go-acme/lego/v5@$lego_version" \
      | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
    [ -d "$lego_dir" ] || { log "no source for lego $lego_version"; exit 1; }
    rm -rf lego
    cp -r "$lego_dir" lego
    chmod -R u+w lego
    rm -f lego/providers/dns/*.go
    cat >lego/providers/dns/dns_providers.go <<'EOF'
// Package dns: lego's DNS-01 provider registry, without providers (Vigil's e2e build of Traefik).
package dns

import (
	"fmt"

	"github.com/go-acme/lego/v5/challenge"
)

// NewDNSChallengeProviderByName knows no provider in this build.
func NewDNSChallengeProviderByName(name string) (challenge.Provider, error) {
	return nil, fmt.Errorf("DNS provider %s: ACME DNS challenges are not in this build", name)
}
EOF
    local auth_dir
    auth_dir="$(go mod download -json github.com/abbot/go-http-auth@v0.4.0 \
      | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
    [ -d "$auth_dir" ] || { log "no source for go-http-auth v0.4.0"; exit 1; }
    rm -rf go-http-auth
    cp -r "$auth_dir" go-http-auth
    chmod -R u+w go-http-auth
    rm -f go-http-auth/*_test.go
    printf 'module github.com/abbot/go-http-auth\n\ngo 1.13\n' >go-http-auth/go.mod
    cat >go-http-auth/vigil_e2e_fork_api.go <<'EOF'
package auth

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// CheckSecret reports whether password matches an htpasswd secret (MD5, {SHA} or bcrypt), the
// comparison BasicAuth.CheckAuth makes.
func CheckSecret(password, secret string) bool {
	compare := compareFuncs[0].compare
	for _, cmp := range compareFuncs[1:] {
		if strings.HasPrefix(secret, cmp.prefix) {
			compare = cmp.compare
			break
		}
	}
	return compare([]byte(secret), []byte(password)) == nil
}

// RequireAuthStale challenges again, as RequireAuth does, with stale=true.
func (a *DigestAuth) RequireAuthStale(w http.ResponseWriter, r *http.Request) {
	if len(a.clients) > a.ClientCacheSize+a.ClientCacheTolerance {
		a.Purge(a.ClientCacheTolerance * 2)
	}
	nonce := RandomKey()
	a.clients[nonce] = &digest_client{nc: 0, last_seen: time.Now().UnixNano()}
	w.Header().Set(contentType, a.Headers.V().UnauthContentType)
	w.Header().Set(a.Headers.V().Authenticate,
		fmt.Sprintf(`Digest realm="%s", nonce="%s", opaque="%s", algorithm="MD5", qop="auth", stale=true`,
			a.Realm, nonce, a.Opaque))
	w.WriteHeader(a.Headers.V().UnauthCode)
	w.Write([]byte(a.Headers.V().UnauthResponse))
}
EOF
    {
      echo "require github.com/traefik/traefik/v3 $TRAEFIK_VERSION"
      echo "replace github.com/traefik/traefik/dynamic/ext => ./ext"
      echo "replace github.com/go-acme/lego/v5 => ./lego"
      echo "replace github.com/abbot/go-http-auth => ./go-http-auth"
      # upstream replace blocks and lines, except the local (=> ./...) one and the go-http-auth
      # fork; excludes
      awk '/^replace \($/ {inb=1; next}
           inb && /^\)/   {inb=0; next}
           /go-http-auth/ {next}
           inb && NF      {print "replace " $0; next}
           /^replace / && $0 !~ /=> \.\// {print}
           /^exclude /    {print}' "$upstream"
    } >>go.mod
    go mod tidy -e >/dev/null 2>"$dir/tidy.log" || { cat "$dir/tidy.log" >&2; exit 1; }
    log "building traefik $TRAEFIK_VERSION"
    nice -n 10 go build -trimpath \
      -ldflags "-s -w -X github.com/traefik/traefik/v3/pkg/version.Version=$TRAEFIK_VERSION" \
      -o "$TRAEFIK_BIN/.traefik.tmp" github.com/traefik/traefik/v3/cmd/traefik
    mv "$TRAEFIK_BIN/.traefik.tmp" "$TRAEFIK_BIN/traefik"
  )
}

# cmd_build [kubernetes|etcd|helm|promtool|olm|kube-proxy|traefik]...: build what is missing (default: all)
cmd_build() {
  command -v go >/dev/null || die "go is not installed"
  mkdir -p "$BIN"
  local t0=$SECONDS t w parts=("$@")
  [ ${#parts[@]} -gt 0 ] || parts=(kubernetes etcd helm promtool olm kube-proxy traefik)
  for w in "${parts[@]}"; do
    t=$SECONDS
    case "$w" in
      kubernetes) [ -x "$BIN/kube-apiserver" ] && [ -x "$BIN/kubectl" ] && continue; build_k8s ;;
      etcd) [ -x "$BIN/etcd" ] && continue; build_etcd ;;
      helm) [ -x "$BIN/helm" ] && continue; build_helm ;;
      promtool) [ -x "$PROMTOOL_BIN/promtool" ] && continue; build_promtool ;;
      olm) [ -x "$OLM_BIN/bundle-validate" ] && continue; build_olm ;;
      kube-proxy) [ -x "$BIN/kube-proxy" ] && continue; build_kube_proxy ;;
      traefik) [ -x "$TRAEFIK_BIN/traefik" ] && continue; build_traefik ;;
      *) die "unknown component '$w' (kubernetes, etcd, helm, promtool, olm, kube-proxy, traefik)" ;;
    esac
    log "$w built in $((SECONDS - t))s"
  done
  log "binaries in $BIN (build step took $((SECONDS - t0))s)"
}

# ---- run -------------------------------------------------------------------
PKI="$STATE/pki"
LOGS="$STATE/logs"
KUBECONFIG_FILE="$STATE/admin.kubeconfig"
ENV_FILE="$STATE/env.sh"

need_bins() {
  local b
  for b in etcd kube-apiserver kubectl; do
    [ -x "$BIN/$b" ] || die "$BIN/$b missing: run '$0 build' first"
  done
  command -v openssl >/dev/null || die "openssl is not installed"
  command -v curl >/dev/null || die "curl is not installed"
  command -v python3 >/dev/null || die "python3 is not installed"
}

free_port() { # a free TCP port on 127.0.0.1, chosen by the kernel
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# pid_alive NAME: the pid in $STATE/NAME.pid is alive and is our binary
pid_alive() {
  local f="$STATE/$1.pid" pid
  [ -f "$f" ] || return 1
  pid="$(cat "$f")"
  [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "$BIN/$1" || return 1
}

# has_exited NAME: the process in $STATE/NAME.pid is gone (or a zombie). Unlike
# pid_alive this does not look at the command line: between the fork of a
# background job and its exec the pid still shows bash's, and a busy machine
# stretched that window enough for a start to take a live etcd for a dead one.
has_exited() {
  local f="$STATE/$1.pid" pid state
  [ -f "$f" ] || return 0
  pid="$(cat "$f")"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
  state="$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" || return 0
  [ "$state" = Z ]
}

stop_one() {
  local name="$1" pid
  if pid_alive "$name"; then
    pid="$(cat "$STATE/$name.pid")"
    log "stopping $name (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 150); do # at most 15 s
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      log "$name did not stop in 15s, killing it"
      kill -KILL "$pid" 2>/dev/null || true
      sleep 0.5
    fi
  fi
  rm -f "$STATE/$name.pid"
}

gen_pki() {
  mkdir -p "$PKI"
  chmod 700 "$PKI"
  (
    cd "$PKI"
    # a CA that signs the client certs and the serving cert
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 30 \
      -subj "/CN=vigil-e2e-ca" 2>/dev/null
    # serving cert for 127.0.0.1 / localhost
    printf '%s\n' \
      'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc' \
      'extendedKeyUsage=serverAuth' \
      'keyUsage=digitalSignature,keyEncipherment' >serving.ext
    openssl req -newkey rsa:2048 -nodes -keyout serving.key -out serving.csr -subj "/CN=kube-apiserver" 2>/dev/null
    openssl x509 -req -in serving.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out serving.crt \
      -days 30 -extfile serving.ext 2>/dev/null
    # admin client cert: CN=admin, O=system:masters
    printf '%s\n' 'extendedKeyUsage=clientAuth' 'keyUsage=digitalSignature,keyEncipherment' >client.ext
    openssl req -newkey rsa:2048 -nodes -keyout admin.key -out admin.csr -subj "/O=system:masters/CN=admin" 2>/dev/null
    openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out admin.crt \
      -days 30 -extfile client.ext 2>/dev/null
    # service-account signing key pair
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    # static admin bearer token (--token-auth-file line: token,user,uid,"groups")
    local token
    token="$(openssl rand -hex 24)"
    echo "$token" >admin.token
    echo "$token,admin-token,admin-token-uid,\"system:masters\"" >tokens.csv
    chmod 600 ./*.key admin.token tokens.csv
  )
}

write_audit_policy() {
  # Writes only (no get/list/watch), at Metadata level, so tests can count the
  # writes made to a resource (e.g. EndpointSlices after an operator restart);
  # every call (reads too) of the ServiceAccounts in vigil-system, the chart's
  # namespace, so LeastPrivilegeE2E can derive the calls Vigil makes.
  printf '%s\n' \
    'apiVersion: audit.k8s.io/v1' \
    'kind: Policy' \
    'omitStages: ["RequestReceived"]' \
    'rules:' \
    '- level: Metadata' \
    '  userGroups: ["system:serviceaccounts:vigil-system"]' \
    '- level: None' \
    '  verbs: ["get", "list", "watch"]' \
    '- level: Metadata' >"$STATE/audit-policy.yaml"
}

write_kubeconfig() {
  local port="$1"
  cat >"$KUBECONFIG_FILE" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: vigil-e2e
  cluster:
    server: https://127.0.0.1:$port
    certificate-authority-data: $(base64 -w0 <"$PKI/ca.crt")
users:
- name: admin
  user:
    client-certificate-data: $(base64 -w0 <"$PKI/admin.crt")
    client-key-data: $(base64 -w0 <"$PKI/admin.key")
contexts:
- name: vigil-e2e
  context:
    cluster: vigil-e2e
    user: admin
    namespace: default
current-context: vigil-e2e
EOF
  chmod 600 "$KUBECONFIG_FILE"
}

write_env() {
  local port="$1" etcd_port="$2"
  cat >"$ENV_FILE" <<EOF
export VIGIL_E2E_KUBECONFIG='$KUBECONFIG_FILE'
export KUBECONFIG='$KUBECONFIG_FILE'
export VIGIL_E2E_APISERVER='https://127.0.0.1:$port'
export VIGIL_E2E_CA_FILE='$PKI/ca.crt'
export VIGIL_E2E_ADMIN_TOKEN_FILE='$PKI/admin.token'
export VIGIL_E2E_AUDIT_LOG='$LOGS/audit.log'
export VIGIL_E2E_ETCD='http://127.0.0.1:$etcd_port'
export VIGIL_E2E_BIN='$BIN'
export VIGIL_E2E_STATE='$STATE'
export PATH='$BIN':"\$PATH"
EOF
}

# wait_until SECONDS WHAT NAME... -- COMMAND...: run COMMAND every 0.5 s until it
# succeeds; fail on timeout or when one of the named processes has died.
wait_until() {
  local secs="$1" what="$2" names=() deadline n
  shift 2
  while [ "$1" != "--" ]; do names+=("$1"); shift; done
  shift
  deadline=$((SECONDS + secs))
  while ! "$@" >/dev/null 2>&1; do
    for n in "${names[@]}"; do
      if has_exited "$n"; then
        tail -n 40 "$LOGS/$n.log" >&2 || true
        die "$n exited while waiting for $what"
      fi
    done
    if [ "$SECONDS" -ge "$deadline" ]; then
      tail -n 40 "$LOGS/${names[-1]}.log" >&2 || true
      die "timed out after ${secs}s waiting for $what"
    fi
    sleep 0.5
  done
}

etcd_healthy() {
  curl -fsS --max-time 3 "http://127.0.0.1:$1/health" | grep -q '"health":"true"'
}

apiserver_ready() {
  [ "$(curl -fsS --max-time 5 --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" \
        "https://127.0.0.1:$1/readyz" 2>/dev/null)" = "ok" ]
}

cmd_start() {
  need_bins
  if pid_alive etcd && pid_alive kube-apiserver && [ -f "$STATE/apiserver.port" ] \
     && apiserver_ready "$(cat "$STATE/apiserver.port")"; then
    log "already running and ready"
    return 0
  fi
  cmd_stop
  # every start gets a fresh, empty cluster
  rm -rf "$STATE"
  mkdir -p "$STATE" "$LOGS"
  chmod 700 "$STATE"
  # on any failure below (die exits, set -e exits), stop what was started
  trap 'rc=$?; if [ "$rc" != 0 ]; then log "start failed, stopping"; cmd_stop; fi' EXIT
  gen_pki
  write_audit_policy
  local etcd_port etcd_peer port
  etcd_port="$(free_port)"; etcd_peer="$(free_port)"; port="$(free_port)"
  echo "$port" >"$STATE/apiserver.port"

  log "starting etcd $ETCD_VERSION on 127.0.0.1:$etcd_port"
  setsid "$BIN/etcd" \
    --name vigil-e2e \
    --data-dir "$STATE/etcd-data" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" \
    --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$etcd_peer" \
    --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer" \
    --initial-cluster "vigil-e2e=http://127.0.0.1:$etcd_peer" \
    --initial-cluster-state new \
    --unsafe-no-fsync \
    --log-level warn \
    </dev/null >"$LOGS/etcd.log" 2>&1 &
  echo $! >"$STATE/etcd.pid"
  wait_until "$TIMEOUT" "etcd /health" etcd -- etcd_healthy "$etcd_port"

  log "starting kube-apiserver $K8S_VERSION on 127.0.0.1:$port"
  # No controller-manager runs here, so the ServiceAccount admission plugin
  # (which rejects Pods whose ServiceAccount, e.g. "default", no controller has
  # created) is disabled. Tokens still come from the TokenRequest API.
  # No endpoint reconciler: it would put 127.0.0.1 into the "kubernetes"
  # Endpoints, which validation rejects (loopback).
  setsid "$BIN/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$etcd_port" \
    --bind-address 127.0.0.1 \
    --advertise-address 127.0.0.1 \
    --secure-port "$port" \
    --cert-dir "$STATE/apiserver-certs" \
    --tls-cert-file "$PKI/serving.crt" \
    --tls-private-key-file "$PKI/serving.key" \
    --client-ca-file "$PKI/ca.crt" \
    --token-auth-file "$PKI/tokens.csv" \
    --authorization-mode RBAC \
    --anonymous-auth=false \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$PKI/sa.pub" \
    --service-account-signing-key-file "$PKI/sa.key" \
    --service-cluster-ip-range 198.19.255.0/24 \
    --endpoint-reconciler-type none \
    --disable-admission-plugins ServiceAccount \
    --allow-privileged=true \
    --profiling=false \
    --audit-policy-file "$STATE/audit-policy.yaml" \
    --audit-log-path "$LOGS/audit.log" \
    --audit-log-maxsize 200 \
    --v 1 \
    </dev/null >"$LOGS/kube-apiserver.log" 2>&1 &
  echo $! >"$STATE/kube-apiserver.pid"
  wait_until "$TIMEOUT" "kube-apiserver /readyz" etcd kube-apiserver -- apiserver_ready "$port"

  write_kubeconfig "$port"
  write_env "$port" "$etcd_port"
  trap - EXIT
  log "ready: https://127.0.0.1:$port, kubeconfig $KUBECONFIG_FILE ('$0 env' prints the exports)"
}

cmd_stop() {
  stop_one kube-apiserver
  stop_one etcd
}

cmd_env() {
  [ -f "$ENV_FILE" ] || die "not started: no $ENV_FILE"
  pid_alive kube-apiserver || die "kube-apiserver is not running: run '$0 start' first"
  cat "$ENV_FILE"
}

cmd_status() {
  local rc=0
  if pid_alive etcd; then echo "etcd: running (pid $(cat "$STATE/etcd.pid"))"; else echo "etcd: stopped"; rc=1; fi
  if pid_alive kube-apiserver; then
    echo "kube-apiserver: running (pid $(cat "$STATE/kube-apiserver.pid")), port $(cat "$STATE/apiserver.port")"
    if apiserver_ready "$(cat "$STATE/apiserver.port")"; then echo "readyz: ok"; else echo "readyz: not ready"; rc=1; fi
  else
    echo "kube-apiserver: stopped"; rc=1
  fi
  return $rc
}

case "${1:-}" in
  build) shift; cmd_build "$@" ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  env) cmd_env ;;
  status) cmd_status ;;
  bindir) echo "$BIN" ;;
  tool) shift; cmd_tool "$@" ;;
  traefik-bindir) echo "$TRAEFIK_BIN" ;;
  *) echo "usage: $0 build|start|stop|env|status|bindir|tool|traefik-bindir" >&2; exit 2 ;;
esac
