#!/usr/bin/env bash
# The OTLP receiver's load run (issue 33), over TLS, next to the JSON intake's figure in the same
# run:
#   1. the JSON intake (dev.vigil.passive.OutcomeIntakeLoad): batches of 1,000 outcomes, outcomes/s
#      and the server event loop's CPU per outcome, median of ROUNDS;
#   2. OTLP/gRPC (dev.vigil.passive.OtlpIntakeLoad): exports of 1,000 Traefik access-log records
#      to the intake's port, authentication cached, one server event loop: records/s and loop CPU
#      per record, median of ROUNDS; then 10x the exports in flight against the default
#      per-identity rate: the answers by gRPC status (RESOURCE_EXHAUSTED with RetryInfo expected)
#      and the heap (used after GC before, at each quarter of 3 x ROUND_S, and the peak).
#
#   bench/otlp-load.sh                                   # 100 backends, 3 rounds of 10 s
#   BACKENDS=100 ROUND_S=10 ROUNDS=3 IN_FLIGHT=8 WARMUP_S=15 HEAP=384m bench/otlp-load.sh
#   BACKENDS=10 ROUND_S=1 ROUNDS=1 WARMUP_S=1 NO_LOCK=1 bench/otlp-load.sh   # a smoke, ~10 s
#
# HEAP defaults to the chart's: 75 % (javaOptions) of the 512 Mi memory limit. Takes
# /tmp/vigil-bench.lock while it measures (other engineers' builds pause), released on exit;
# NO_LOCK=1 skips it (smoke runs only: the figures then mean nothing).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BACKENDS=${BACKENDS:-100}
ROUND_S=${ROUND_S:-10}
ROUNDS=${ROUNDS:-3}
IN_FLIGHT=${IN_FLIGHT:-8}
WARMUP_S=${WARMUP_S:-15}
HEAP=${HEAP:-384m}
OUT=${OUT:-/tmp/otlp-load}
mkdir -p "$OUT"
echo "building (test classes + classpath)" >&2
(cd "$ROOT" && mvn -B -q -pl operator test-compile dependency:build-classpath \
    -Dmdep.includeScope=test -Dmdep.outputFile="$OUT/cp.txt")
CP="$ROOT/operator/target/classes:$ROOT/operator/target/test-classes:$(cat "$OUT/cp.txt")"
if [ -z "${NO_LOCK:-}" ]; then
  until mkdir /tmp/vigil-bench.lock 2>/dev/null; do echo "waiting for /tmp/vigil-bench.lock" >&2; sleep 20; done
  trap 'rmdir /tmp/vigil-bench.lock' EXIT
fi
echo "loadavg before: $(cut -d' ' -f1-3 /proc/loadavg)"
timeout 1800 java "-Xmx$HEAP" -XX:+ExitOnOutOfMemoryError -cp "$CP" \
  dev.vigil.passive.OutcomeIntakeLoad "$BACKENDS" "$ROUND_S" "$ROUNDS" "$IN_FLIGHT" "$WARMUP_S" \
  | grep -v ' INFO ' | tee "$OUT/json.txt"
timeout 1800 java "-Xmx$HEAP" -XX:+ExitOnOutOfMemoryError -cp "$CP" \
  dev.vigil.passive.OtlpIntakeLoad "$BACKENDS" "$ROUND_S" "$ROUNDS" "$IN_FLIGHT" "$WARMUP_S" \
  | grep -v ' INFO ' | tee "$OUT/otlp.txt"
echo "loadavg after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "JSON: $(grep MEDIAN "$OUT/json.txt" | head -1)"
echo "OTLP: $(grep 'OTLP MEDIAN' "$OUT/otlp.txt" | head -1)"
echo "10x:  $(grep OVERLOAD "$OUT/otlp.txt" | head -1)"
