#!/usr/bin/env bash
# Checks Vigil's alerts and dashboard with Prometheus' own promtool (built from Go modules and
# cached by e2e/control-plane.sh build promtool; helm from e2e/control-plane.sh build helm):
#   1. the chart's PrometheusRule, rendered by helm with prometheusRule.enabled=true, passes
#      `promtool check rules` and the unit tests in alerts-test.yaml (series in, alerts out);
#   2. every query of the dashboard parses: each becomes a recording rule of a rules file
#      that `promtool check rules` checks (Grafana's $variables replaced by sample values first).
# That every metric and label these queries use exists is checked against a real scrape of the
# demo by MonitoringReferencesIT in mvn verify.
#
#   deploy/monitoring/check.sh          prints "N passed, M failed"; exit 1 when a check failed
#
# Environment: PROMTOOL, HELM (default: the cached builds), VIGIL_E2E_CACHE (see e2e/README.md).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

PROMTOOL="${PROMTOOL:-$("$root/e2e/control-plane.sh" tool promtool)}"
HELM="${HELM:-$("$root/e2e/control-plane.sh" bindir)/helm}"
[ -x "$HELM" ] || { echo "[monitoring] no helm at $HELM: run e2e/control-plane.sh build helm" >&2; exit 1; }

work="$(mktemp -d -t vigil-monitoring.XXXXXX)"
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
check() { # check NAME COMMAND...: run, count, show the output of a failure
  local name="$1"
  shift
  if "$@" >"$work/out" 2>&1; then
    passed=$((passed + 1))
    echo "[monitoring] ok: $name"
  else
    failed=$((failed + 1))
    echo "[monitoring] FAILED: $name"
    sed 's/^/    /' "$work/out"
  fi
}

echo "[monitoring] $("$PROMTOOL" --version 2>&1 | head -n 1); $("$HELM" version --short)"

# 1. The alerts: the PrometheusRule's spec is a Prometheus rules file.
"$HELM" template vigil "$root/deploy/helm/vigil" --namespace vigil-system --kube-version 1.37.0 \
  --set prometheusRule.enabled=true --show-only templates/prometheusrule.yaml >"$work/prometheusrule.yaml"
python3 - "$work/prometheusrule.yaml" "$work/vigil-rules.yaml" <<'PY'
import sys, yaml
rule = yaml.safe_load(open(sys.argv[1]))
assert rule["kind"] == "PrometheusRule", rule["kind"]
yaml.safe_dump(rule["spec"], open(sys.argv[2], "w"), sort_keys=False, width=1000)
PY
cp "$here/alerts-test.yaml" "$work/alerts-test.yaml"
check "promtool check rules (the chart's PrometheusRule)" "$PROMTOOL" check rules "$work/vigil-rules.yaml"
check "promtool test rules deploy/monitoring/alerts-test.yaml" "$PROMTOOL" test rules "$work/alerts-test.yaml"

# Every alert of the rule has a unit test.
python3 - "$work/vigil-rules.yaml" "$here/alerts-test.yaml" >"$work/untested" <<'PY'
import sys, yaml
alerts = {r["alert"] for g in yaml.safe_load(open(sys.argv[1]))["groups"] for r in g["rules"] if "alert" in r}
tests = yaml.safe_load(open(sys.argv[2]))["tests"]
tested = {a["alertname"] for t in tests for a in t.get("alert_rule_test", [])
          if a.get("exp_alerts")}
for name in sorted(alerts - tested):
    print(name)
PY
check "every alert has a test that fires it" test ! -s "$work/untested"
[ -s "$work/untested" ] && sed 's/^/    untested: /' "$work/untested"

# 2. The dashboard's queries, each as a recording rule.
python3 - "$root/deploy/helm/vigil/dashboards/vigil-dashboard.json" "$work/dashboard-rules.yaml" <<'PY'
import json, re, sys
dash = json.load(open(sys.argv[1]))
samples = {"job": "vigil", "namespace": "shop", "pool": "web", "__rate_interval": "2m", "__interval": "30s",
           "__range": "1h", "datasource": "prometheus"}
def expand(expr):
    expr = re.sub(r"\$\{(\w+)(?::\w+)?\}", lambda m: samples[m.group(1)], expr)
    return re.sub(r"\$(\w+)", lambda m: samples[m.group(1)], expr)
rules = []
def panels(ps):
    for p in ps:
        yield p
        yield from panels(p.get("panels", []))
for p in panels(dash["panels"]):
    for i, t in enumerate(p.get("targets", [])):
        rules.append({"record": "dashboard:panel_%d_%d" % (p["id"], i), "expr": expand(t["expr"])})
for v in dash.get("templating", {}).get("list", []):
    q = v.get("query")
    if isinstance(q, dict):
        q = q.get("query")
    m = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", q or "")
    if m:
        rules.append({"record": "dashboard:variable_" + v["name"], "expr": expand(m.group(1))})
json.dump({"groups": [{"name": "dashboard", "rules": rules}]}, open(sys.argv[2], "w"), indent=1)

PY
check "promtool check rules (every query of the dashboard)" "$PROMTOOL" check rules "$work/dashboard-rules.yaml"

echo "monitoring: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
