package dev.vigil.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.health.HealthSettings;
import dev.vigil.health.Origin;
import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ProbeResult;
import dev.vigil.probe.Probing;
import dev.vigil.probe.VertxTimers;
import io.vertx.core.Context;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The status and Event reasons of docs/design.md §2.2's two rules, through the real {@link
 * PoolRuntime}: a fail-fast status names itself, and an ejection by the window rule names the
 * window.
 */
class SeedRuleReasonsTest {
  private Vertx vertx;
  private Context context;
  private final AtomicReference<Probing.Results> callback = new AtomicReference<>();
  private final List<String> events = new CopyOnWriteArrayList<>();
  private final AtomicLong clock = new AtomicLong(1_000_000);

  private final TransitionSink sink =
      new TransitionSink() {
        @Override
        public void stateChanged(PoolKey p, String b, String f, String t, String r) {
          events.add(b + " " + f + "->" + t + ": " + r);
        }

        @Override
        public void ejected(PoolKey p, String b, long u, String w) {
          events.add(b + " ejected: " + w);
        }

        @Override
        public void ejectionRefused(PoolKey p, String b, String w) {
          events.add(b + " refused: " + w);
        }

        @Override
        public void wouldEject(PoolKey p, String b, String w) {
          events.add(b + " would eject: " + w);
        }
      };

  @BeforeEach
  void start() {
    vertx = Vertx.vertx();
    context = vertx.getOrCreateContext();
  }

  @AfterEach
  void stop() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private PoolRuntime runtime(HealthSettings settings) throws Exception {
    Probing none = new NoProbes();
    PoolRuntime rt =
        new PoolRuntime(
            new PoolKey("shop", "web"),
            new VertxTimers(context),
            settings,
            cb -> {
              callback.set(cb);
              return none;
            },
            pool -> {},
            sink,
            Confirmer.ALONE,
            clock::get);
    List<Member> members =
        List.of(
            Member.of("a", "uid-a", "10.0.0.1", 80, null, null, false, false, List.of()),
            Member.of("b", "uid-b", "10.0.0.2", 80, null, null, false, false, List.of()));
    await(rt.update(settings, CheckSpec.builder().build(), 1, members, Map.of()));
    return rt;
  }

  private void result(String id, ProbeResult r) throws Exception {
    Promise<Void> done = Promise.promise();
    context.runOnContext(
        v -> {
          callback.get().result(id, r);
          done.complete();
        });
    await(done.future());
  }

  private static <T> T await(io.vertx.core.Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  @Test
  void aFailFastStatusNamesItselfAsTheReason() throws Exception {
    runtime(HealthSettings.builder().fall(3).build());
    result("a", ProbeResult.httpStatus(true, 200, 1));
    result("a", ProbeResult.failFastStatus(503, 1));
    assertThat(events)
        .containsExactly(
            "a UNKNOWN->UP: first probe passed",
            "a UP->DOWN: fail-fast status (active.http.failFastStatuses): status 503 (fail-fast)");
  }

  @Test
  void aWindowEjectionNamesTheWindow() throws Exception {
    PoolRuntime rt =
        runtime(
            HealthSettings.builder()
                .consecutiveErrors(0)
                .maxEjectionPercent(50)
                .windowFailures(2)
                .failureWindowMs(10_000)
                .build());
    await(rt.onOutcome("10.0.0.1", false, Origin.UPSTREAM));
    await(rt.onOutcome("10.0.0.1", true, Origin.UPSTREAM));
    await(rt.onOutcome("10.0.0.1", false, Origin.UPSTREAM));
    assertThat(events).containsExactly("a ejected: 2 errors within 10s (passive.windowFailures)");
  }
}
