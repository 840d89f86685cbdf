package dev.vigil.health;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.replay.ReplayCommand;
import dev.vigil.replay.ReplaySession;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * docs/design.md §2.2's two rules as {@code replay} applies them (through its flags, its
 * status-line classification and its text protocol) agree with the scanning {@link ReferencePool}
 * on random sequences of probe answers, outcomes and clock steps: every answer's effect on the
 * backends' state and the published set is compared after every line.
 */
class ReplayAgreementTest {
  private static final String[] ANSWERS = {
    "HTTP/1.1 200 OK",
    "HTTP/1.1 503 Unavailable",
    "HTTP/1.1 429 Slow down",
    "HTTP/1.1 404 No",
    "TIMEOUT"
  };

  @Test
  void replayAndTheReferenceModelAgreeOnFailFastAndWindowFailures() {
    long master = System.nanoTime();
    System.out.println("ReplayAgreementTest: master seed " + master);
    Random seeds = new Random(master);
    int ejections = 0;
    int failFastDowns = 0;
    for (int run = 0; run < 200; run++) {
      long seed = seeds.nextLong();
      Random r = new Random(seed);
      int rise = 1 + r.nextInt(3);
      int fall = 1 + r.nextInt(4);
      int windowFailures = 1 + r.nextInt(4);
      long windowMs = 1 + r.nextInt(3_000);
      int consecutive = r.nextInt(4);
      boolean split = r.nextBoolean();
      HealthSettings settings =
          HealthSettings.builder()
              .rise(rise)
              .fall(fall)
              .consecutiveErrors(consecutive)
              .splitLocalOrigin(split)
              .maxEjectionPercent(50)
              .windowFailures(windowFailures)
              .failureWindowMs(windowMs)
              .build();
      ReplaySession replay =
          ReplayCommand.session(
              List.of(
                  "--rise=" + rise,
                  "--fall=" + fall,
                  "--consecutive-errors=" + consecutive,
                  "--split-local-origin=" + split,
                  "--max-ejection-percent=50",
                  "--window-failures=" + windowFailures,
                  "--failure-window-ms=" + windowMs,
                  "--fail-fast-statuses=500-599,429"));
      ReferencePool ref = new ReferencePool(settings);
      List<String> ids = List.of("a", "b", "c", "d");
      long now = 0;
      ids.forEach(ref::add);
      ids.forEach(id -> ref.restore(id, ActiveState.UP, 0, 0, DampingState.NONE, 0));
      ref.restorePanic(false);
      replay.handle("POOL a b c d");
      List<String> log = new ArrayList<>();
      for (int step = 0; step < 300; step++) {
        String id = ids.get(r.nextInt(ids.size()));
        int roll = r.nextInt(10);
        String line;
        if (roll < 4) {
          String answer = ANSWERS[r.nextInt(ANSWERS.length)];
          boolean pass = answer.contains(" 200 ");
          boolean failFast = answer.contains(" 503 ") || answer.contains(" 429 ");
          ActiveState before = ref.members.get(id).state;
          ref.probe(id, pass, failFast, now);
          if (failFast && before == ActiveState.UP && ref.members.get(id).state != before) {
            failFastDowns++;
          }
          line = "PROBE " + id + " " + answer;
        } else if (roll < 8) {
          boolean ok = r.nextInt(3) == 0;
          boolean local = r.nextInt(3) == 0;
          Origin origin = local ? Origin.LOCAL : Origin.UPSTREAM;
          EjectionDecision d = ref.outcome(id, ok, origin, -1, now);
          ejections += d.isEjected() ? 1 : 0;
          line = "OUTCOME " + id + (ok ? " OK" : " FAIL") + (local ? " local" : "");
          String want =
              switch (d.kind()) {
                case EJECTED -> "EJECTED " + d.ejectedUntil();
                case REFUSED_BY_CAP -> "REFUSED";
                case WOULD_EJECT -> "WOULD_EJECT " + d.ejectedUntil();
                case NOT_NEEDED -> "-";
              };
          log.add(line);
          assertThat(replay.handle(line)).as("seed %d after %s", seed, log).containsExactly(want);
          continue;
        } else {
          now += r.nextInt(800);
          ref.expireEjections(now);
          line = "AT " + now;
        }
        log.add(line);
        replay.handle(line);
        List<String> status = new ArrayList<>();
        ids.forEach(
            i -> status.add(i + (ref.members.get(i).state == ActiveState.UP ? " UP" : " DOWN")));
        assertThat(replay.handle("STATUS")).as("seed %d after %s", seed, log).isEqualTo(status);
        ReferencePool.Published p = ref.published();
        String ready = String.join(",", ids.stream().filter(p.ready()::contains).toList());
        String want = (ready.isEmpty() ? "none" : ready) + (p.panic() ? " PANIC" : "");
        assertThat(replay.handle("AVAILABLE"))
            .as("seed %d after %s", seed, log)
            .containsExactly(want);
      }
    }
    assertThat(ejections).as("ejections made").isGreaterThan(200);
    assertThat(failFastDowns).as("fail-fast downs").isGreaterThan(200);
  }
}
