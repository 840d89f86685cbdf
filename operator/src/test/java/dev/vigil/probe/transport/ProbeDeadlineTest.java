package dev.vigil.probe.transport;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.util.concurrent.ScheduledFuture;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A probe's deadline runs on the context that scheduled it, and not at all once cancelled. */
class ProbeDeadlineTest {
  private final Vertx vertx = Vertx.vertx();

  @AfterEach
  void close() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  @Test
  void runsOnTheContextThatScheduledIt() throws Exception {
    Context context = vertx.getOrCreateContext();
    CompletableFuture<Context> ranOn = new CompletableFuture<>();
    context.runOnContext(
        v -> ProbeDeadline.schedule(vertx, 20, () -> ranOn.complete(Vertx.currentContext())));
    assertThat(ranOn.get(5, TimeUnit.SECONDS)).isSameAs(context);
  }

  @Test
  void aCancelledDeadlineNeverRuns() throws Exception {
    Context context = vertx.getOrCreateContext();
    AtomicBoolean ran = new AtomicBoolean();
    CompletableFuture<Boolean> cancelled = new CompletableFuture<>();
    context.runOnContext(
        v -> {
          ScheduledFuture<?> deadline = ProbeDeadline.schedule(vertx, 50, () -> ran.set(true));
          cancelled.complete(deadline.cancel(false));
        });
    assertThat(cancelled.get(5, TimeUnit.SECONDS)).isTrue();
    // a later deadline on the same loop runs after the cancelled one was due
    CompletableFuture<Void> later = new CompletableFuture<>();
    context.runOnContext(v -> ProbeDeadline.schedule(vertx, 150, () -> later.complete(null)));
    later.get(5, TimeUnit.SECONDS);
    assertThat(ran).isFalse();
  }
}
