package dev.vigil.passive;

import dev.vigil.health.Origin;
import dev.vigil.runtime.OutcomeReport;
import dev.vigil.runtime.PoolKey;

/**
 * One valid outcome of a batch.
 *
 * @param index the item's position in the batch, from 0
 * @param ip the backend's IP, as the Pod's status lists it
 * @param port the port the request went to (1..65535)
 * @param latencyMs -1 when not reported
 */
record ParsedOutcome(
    int index, PoolKey pool, String ip, int port, boolean ok, Origin origin, long latencyMs) {

  OutcomeReport report() {
    return new OutcomeReport(ip, ok, origin, latencyMs);
  }
}
