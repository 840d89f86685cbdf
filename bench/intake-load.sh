#!/usr/bin/env bash
# The outcome intake's load runs, over TLS, in one command:
#   1. throughput (dev.vigil.passive.OutcomeIntakeLoad): batches of 1,000 outcomes, authentication
#      cached, per pool size outcomes/s and the server event loop's CPU per outcome (median of
#      ROUNDS rounds);
#   2. the slow-body proof of issue 12 (dev.vigil.passive.SlowReportersLoad): 200 TLS connections to the outcome intake, each
# promising a 4 MiB body and sending 1 KiB every 100 ms (reconnecting a second after an answer),
# while a legitimate reporter posts one-outcome batches; once with senders allowed to report
# (their bodies are read, up to the bytes-in-flight budget) and once with senders that are not
# (refused before the body). Prints per round the reporter's statuses and latency, the intake's
# most bytes in flight and connections, and the heap (peak, live after GC), then the median.
#
#   bench/intake-load.sh                      # both; 200 connections, 50 requests, 3 rounds
#   RUNS=slow CONNECTIONS=200 REQUESTS=50 ROUNDS=3 HEAP=384m bench/intake-load.sh
#   RUNS=throughput SIZES=10,100,1000 ROUND_S=10 bench/intake-load.sh
#
# HEAP defaults to the chart's: 75 % (javaOptions) of the 512 Mi memory limit. Takes
# /tmp/vigil-bench.lock while it measures (other engineers' builds pause), released on exit.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${RUNS:-"throughput slow"}
SIZES=${SIZES:-10,100,1000}
ROUND_S=${ROUND_S:-10}
CONNECTIONS=${CONNECTIONS:-200}
REQUESTS=${REQUESTS:-50}
ROUNDS=${ROUNDS:-3}
HEAP=${HEAP:-384m}
OUT=${OUT:-/tmp/intake-load}
mkdir -p "$OUT"
echo "building (test classes + classpath)" >&2
(cd "$ROOT" && mvn -B -q -pl operator test-compile dependency:build-classpath \
    -Dmdep.includeScope=test -Dmdep.outputFile="$OUT/cp.txt")
CP="$ROOT/operator/target/classes:$ROOT/operator/target/test-classes:$(cat "$OUT/cp.txt")"
until mkdir /tmp/vigil-bench.lock 2>/dev/null; do echo "waiting for /tmp/vigil-bench.lock" >&2; sleep 20; done
trap 'rmdir /tmp/vigil-bench.lock' EXIT
echo "loadavg before: $(cut -d' ' -f1-3 /proc/loadavg)"
for run in $RUNS; do
  case "$run" in
    throughput)
      timeout 1800 java "-Xmx$HEAP" -XX:+ExitOnOutOfMemoryError -cp "$CP" \
        dev.vigil.passive.OutcomeIntakeLoad "$SIZES" "$ROUND_S" "$ROUNDS" \
        | grep -v ' INFO ' | tee "$OUT/throughput.txt" ;;
    slow)
      timeout 1800 java "-Xmx$HEAP" -XX:+ExitOnOutOfMemoryError -cp "$CP" \
        dev.vigil.passive.SlowReportersLoad "$CONNECTIONS" "$REQUESTS" "$ROUNDS" \
        | grep -v ' INFO ' | tee "$OUT/slow.txt" ;;
    *) echo "unknown run $run (throughput, slow)" >&2; exit 2 ;;
  esac
done
echo "loadavg after: $(cut -d' ' -f1-3 /proc/loadavg)"
