package dev.vigil.publish;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.BackendPoolStatus;
import dev.vigil.api.v1alpha1.BackendState;
import dev.vigil.api.v1alpha1.BackendStatus;
import dev.vigil.api.v1alpha1.LastProbe;
import dev.vigil.demo.EmbeddedApiServer;
import dev.vigil.testing.Fixtures;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * {@link StatusWriter} writing through a recording client (the status PUT to the mock API server,
 * each call recorded): no write when only probe times changed, at most one per interval per object.
 */
class StatusWriterTest {
  @AutoClose private final EmbeddedApiServer api = EmbeddedApiServer.start();
  private final AtomicLong now = new AtomicLong(1_000_000);
  private final AtomicInteger counted = new AtomicInteger();
  private final StatusWriter<BackendPoolStatus, BackendPool> writer =
      new StatusWriter<>(now::get, 1_000, WriteBudget.unlimited(), counted::incrementAndGet);
  private final List<BackendPool> puts = new ArrayList<>();

  private Optional<Duration> write(BackendPool pool, BackendPoolStatus status) throws Exception {
    return writer.write(
        copy -> {
          puts.add(copy);
          api.client().resource(copy).updateStatus();
        },
        pool,
        status);
  }

  private BackendPool live() {
    return api.client().resources(BackendPool.class).inNamespace("shop").withName("web").get();
  }

  private static BackendPoolStatus status(String state, String probedAt) {
    BackendStatus b = new BackendStatus();
    b.setPod("web-0");
    b.setState(BackendState.valueOf(state));
    LastProbe probe = new LastProbe();
    probe.setAt(probedAt);
    probe.setOk(true);
    b.setLastProbe(probe);
    BackendPoolStatus s = new BackendPoolStatus();
    s.setBackends(List.of(b));
    return s;
  }

  @Test
  void writesOnlyWhatAReaderReliesOnAtMostOncePerInterval() throws Exception {
    api.client().resource(Fixtures.pool("shop", "web", "fast", "web", 8080)).create();

    assertThat(write(live(), status("UP", "2026-01-01T00:00:00Z"))).isEmpty();
    assertThat(puts).hasSize(1);
    assertThat(live().getStatus().getBackends().get(0).getState()).isEqualTo(BackendState.UP);

    assertThat(write(live(), status("UP", "2026-01-01T00:00:05Z")))
        .as("only the probe time changed")
        .isEmpty();
    assertThat(puts).hasSize(1);

    now.addAndGet(400);
    assertThat(write(live(), status("DOWN", "2026-01-01T00:00:06Z")))
        .as("coalesced: due in the rest of the interval")
        .contains(Duration.ofMillis(600));
    assertThat(puts).hasSize(1);

    now.addAndGet(600);
    assertThat(write(live(), status("DOWN", "2026-01-01T00:00:06Z"))).isEmpty();
    assertThat(puts).hasSize(2);
    assertThat(live().getStatus().getBackends().get(0).getState()).isEqualTo(BackendState.DOWN);
    assertThat(counted).hasValue(2);

    writer.forget("shop", "web");
    assertThat(write(live(), status("UP", "2026-01-01T00:00:07Z")))
        .as("a forgotten object has no interval running")
        .isEmpty();
    assertThat(puts).hasSize(3);
  }
}
