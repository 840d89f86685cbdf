#!/usr/bin/env bash
# Load run of the whole operator (issue 4): 1,000 pools x 10 backends on loopback.
#   bench/operator-load.sh                                # defaults below
#   POOLS=100 PER_POOL=10 KILLS=20 STEADY_S=30 bench/operator-load.sh
# Backends: ../shared/bench/farm.py (separate process, 127.2.x.y:8080); API server: the embedded
# Fabric8 mock server in its own JVM (dev.vigil.bench.ApiServerMain); the operator alone in the
# measured JVM (dev.vigil.bench.OperatorLoadBench). Bounded: the farm stops after 30 min, every
# wait has a timeout, children are killed on exit.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FARM_DIR=${FARM_DIR:-$(cd "$ROOT/../shared/bench" && pwd)}
OUT=${OUT:-/tmp/vigil-operator-load}
mkdir -p "$OUT"
(cd "$ROOT" && mvn -B -q -pl operator test-compile dependency:build-classpath \
    -Dmdep.includeScope=test -Dmdep.outputFile="$OUT/cp.txt")
CP="$ROOT/operator/target/classes:$ROOT/operator/target/test-classes:$(cat "$OUT/cp.txt")"
timeout 1800 java ${JAVA_OPTS:--Xmx2g} -cp "$CP" dev.vigil.bench.OperatorLoadBench \
  --pools "${POOLS:-1000}" --per-pool "${PER_POOL:-10}" --interval-ms "${INTERVAL_MS:-2000}" \
  --kills "${KILLS:-100}" --steady-s "${STEADY_S:-60}" --farm-dir "$FARM_DIR" \
  2>&1 | tee "$OUT/run.log"
