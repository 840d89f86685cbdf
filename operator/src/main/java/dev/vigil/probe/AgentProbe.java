package dev.vigil.probe;

import io.vertx.core.Future;
import java.time.Duration;

/**
 * Asks one backend's agent once. Implementations never fail the future: no answer becomes {@link
 * AgentReply#nothing}; the future completes at the latest shortly after {@code timeout}.
 */
@FunctionalInterface
public interface AgentProbe {
  AgentProbe NONE = (target, timeout) -> Future.succeededFuture(AgentReply.nothing("no agent"));

  Future<AgentReply> ask(ProbeTarget target, Duration timeout);
}
