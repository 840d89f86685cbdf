#!/usr/bin/env bash
# Smoke test of the harness itself: builds (or reuses) the binaries, brings up
# two test hosts and the control plane, checks what the E2E tests rely on,
# and tears everything down (also on failure). Prints "N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
E2E=e2e
pass=0 fail=0
check() { # check NAME COMMAND...
  local name="$1"; shift
  if out="$("$@" 2>&1)"; then pass=$((pass + 1)); echo "ok   - $name"
  else fail=$((fail + 1)); echo "FAIL - $name"; echo "$out" | sed 's/^/       /' | tail -n 15; fi
}
check_fails() { # check_fails NAME PATTERN COMMAND...: COMMAND must fail and print PATTERN
  local name="$1" pat="$2"; shift 2
  if out="$("$@" 2>&1)"; then fail=$((fail + 1)); echo "FAIL - $name (unexpectedly succeeded)"
  elif echo "$out" | grep -q -- "$pat"; then pass=$((pass + 1)); echo "ok   - $name"
  else fail=$((fail + 1)); echo "FAIL - $name"; echo "$out" | sed 's/^/       /' | tail -n 15; fi
}

cleanup() {
  [ -n "${HTTP_PID:-}" ] && kill "$HTTP_PID" 2>/dev/null
  $E2E/control-plane.sh stop
  $E2E/netns.sh down
}
trap cleanup EXIT

$E2E/control-plane.sh build ${VIGIL_E2E_SMOKE_BUILD:-} || { echo "0 passed, 1 failed"; exit 1; }
$E2E/netns.sh up 2 || { echo "0 passed, 1 failed"; exit 1; }
$E2E/control-plane.sh start || { echo "0 passed, 1 failed"; exit 1; }
eval "$($E2E/control-plane.sh env)"
NS="smoke-$$"
H1="$($E2E/netns.sh addr 1)"
WWW="$(mktemp -d)"
echo "hello from vigil-h1" >"$WWW/index.html"
( cd "$WWW" && exec timeout 120 ip netns exec vigil-h1 python3 -m http.server --bind "$H1" 8080 ) >/dev/null 2>&1 &
HTTP_PID=$!

check "kubectl and server report v1.37.2" sh -c 'kubectl version | grep -q "Server Version: v1.37.2"'
check "kubectl get ns" kubectl get ns default kube-system
check "admin can do anything" sh -c '[ "$(kubectl auth can-i "*" "*")" = yes ]'
check "create namespace" kubectl create ns "$NS"
check "create ServiceAccount" kubectl -n "$NS" create sa reporter
TOKEN="$(kubectl -n "$NS" create token reporter --duration 10m 2>&1)"
check "TokenRequest (kubectl create token)" sh -c "echo '$TOKEN' | grep -q '^eyJ'"
SA="kubectl --kubeconfig=/dev/null --server=$VIGIL_E2E_APISERVER --certificate-authority=$VIGIL_E2E_CA_FILE --token=$TOKEN"
check "the token authenticates as the ServiceAccount" sh -c "$SA auth whoami | grep -q system:serviceaccount:$NS:reporter"
check_fails "RBAC denies the unbound ServiceAccount" Forbidden $SA -n "$NS" get pods
check "RBAC: Role + RoleBinding" sh -c "kubectl -n $NS create role r --verb=get,list --resource=pods && kubectl -n $NS create rolebinding rb --role=r --serviceaccount=$NS:reporter"
check "RBAC allows the bound ServiceAccount" sh -c "for i in 1 2 3 4 5 6 7 8 9 10; do $SA -n $NS get pods && exit 0; sleep 0.5; done; exit 1"
check "Pod with a test host's IP in its status" sh -c "kubectl -n $NS run web --image=example.invalid/web --labels app=web >/dev/null &&
  kubectl -n $NS patch pod web --subresource=status --type=merge -p '{\"status\":{\"phase\":\"Running\",\"podIP\":\"$H1\",\"podIPs\":[{\"ip\":\"$H1\"}]}}' >/dev/null &&
  [ \"\$(kubectl -n $NS get pod web -o jsonpath='{.status.podIP}')\" = $H1 ]"
slice() { # slice NAME IP
  printf '%s\n' 'apiVersion: discovery.k8s.io/v1' 'kind: EndpointSlice' \
    "metadata: {name: $1, labels: {kubernetes.io/service-name: web}}" 'addressType: IPv4' \
    'ports: [{name: http, port: 8080, protocol: TCP}]' "endpoints: [{addresses: [\"$2\"], conditions: {ready: true}}]"
}
check "EndpointSlice with $H1 accepted" sh -c "$(declare -f slice); slice good $H1 | kubectl -n $NS apply --server-side -f -"
check_fails "EndpointSlice with 127.0.0.1 rejected" "may not be in the loopback range" \
  sh -c "$(declare -f slice); slice bad 127.0.0.1 | kubectl -n $NS apply -f -"
check "writes show in the audit log" grep -q "\"namespace\":\"$NS\"" "$VIGIL_E2E_AUDIT_LOG"
check "test host reachable from the root namespace" sh -c \
  "for i in \$(seq 1 20); do curl -fsS --max-time 2 http://$H1:8080/ | grep -q 'hello from vigil-h1' && exit 0; sleep 0.25; done; exit 1"
check "test host reachable from the other host" ip netns exec vigil-h2 curl -fsS --max-time 2 "http://$H1:8080/"
check_fails "test hosts have no route out of 198.18.0.0/24" "unreachable" ip netns exec vigil-h1 ip route get 203.0.113.1
CRD="$(mktemp)"
printf '%s\n' 'apiVersion: apiextensions.k8s.io/v1' 'kind: CustomResourceDefinition' \
  'metadata: {name: widgets.smoke.vigil.test}' 'spec:' '  group: smoke.vigil.test' \
  '  names: {kind: Widget, plural: widgets, singular: widget}' '  scope: Namespaced' '  versions:' \
  '  - name: v1' '    served: true' '    storage: true' \
  '    additionalPrinterColumns: [{name: Rise, type: integer, jsonPath: .spec.rise}]' \
  '    schema:' '      openAPIV3Schema:' '        type: object' '        properties:' '          spec:' \
  '            type: object' \
  '            x-kubernetes-validations: [{rule: "self.timeout < self.interval", message: "timeout must be less than interval"}]' \
  '            properties:' \
  '              rise: {type: integer, minimum: 1, description: "Successes in a row to become healthy."}' \
  '              interval: {type: integer}' '              timeout: {type: integer}' >"$CRD"
check "CRD established" sh -c "kubectl apply -f $CRD && kubectl wait --for condition=Established crd/widgets.smoke.vigil.test --timeout 30s"
check_fails "CRD schema and CEL rule enforced" "timeout must be less than interval" sh -c \
  "printf 'apiVersion: smoke.vigil.test/v1\nkind: Widget\nmetadata: {name: bad}\nspec: {rise: 0, interval: 1, timeout: 5}\n' | kubectl -n $NS apply -f -"
check "printer column served" sh -c \
  "printf 'apiVersion: smoke.vigil.test/v1\nkind: Widget\nmetadata: {name: good}\nspec: {rise: 2, interval: 5, timeout: 1}\n' | kubectl -n $NS apply -f - >/dev/null &&
   kubectl -n $NS get widgets | grep -Eq '^good +2$'"
# the OpenAPI document of a new CRD is published a moment after it is Established: retry
check "kubectl explain shows the CRD's descriptions" sh -c \
  "for i in \$(seq 1 30); do kubectl explain widget.spec.rise 2>/dev/null | grep -q 'Successes in a row' && exit 0; sleep 1; done; exit 1"
rm -f "$CRD"
if [ -x "$VIGIL_E2E_BIN/helm" ]; then
  CHART="$(mktemp -d)"
  check "helm version v3.22.0" sh -c 'helm version --short | grep -q "^v3.22.0"'
  check "helm install of a generated chart" sh -c "cd $CHART && helm create demo >/dev/null &&
    helm install demo ./demo -n $NS --wait=false --timeout 60s >/dev/null && kubectl -n $NS get deploy demo"
  rm -rf "$CHART"
fi
rm -rf "$WWW"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
