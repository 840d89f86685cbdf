package dev.vigil.probe;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Promise;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** {@link AgentLoops} on a manual clock: its own cadence, one question in flight, clean stops. */
class AgentLoopsTest {
  private final ManualTimers timers = new ManualTimers();
  private final List<ProbeTarget> asked = new ArrayList<>();
  private final List<Promise<AgentReply>> open = new ArrayList<>();
  private final List<String> answers = new ArrayList<>();
  private final AgentLoops loops =
      new AgentLoops(
          (target, timeout) -> {
            asked.add(target);
            Promise<AgentReply> p = Promise.promise();
            open.add(p);
            return p.future();
          },
          timers,
          new SplittableRandom(1),
          (id, reply) -> answers.add(id + ":" + reply.admin()));

  private static CheckSpec check(int agentPort, long intervalMs) {
    return CheckSpec.builder()
        .timeout(Duration.ofMillis(100))
        .agent(new CheckSpec.Agent(agentPort, Duration.ofMillis(intervalMs)))
        .build();
  }

  @Test
  void asksEveryIntervalOnTheAgentPortAndSkipsATickWhileAQuestionIsOut() {
    loops.configure(check(9999, 1000), Map.of());
    loops.add("web-0", new ProbeTarget("10.0.0.1", 8080));
    timers.advance(1000); // first question within [0, interval)
    assertThat(asked).containsExactly(new ProbeTarget("10.0.0.1", 9999));
    timers.advance(1000); // still unanswered: no second question
    assertThat(asked).hasSize(1);
    open.get(0).complete(AgentReply.parse("drain"));
    assertThat(answers).containsExactly("web-0:DRAIN");
    timers.advance(1000);
    assertThat(asked).hasSize(2);
  }

  @Test
  void noAgentNoQuestionsAndARemovedBackendsLateAnswerIsDropped() {
    loops.configure(check(0, 1000), Map.of());
    loops.add("web-0", new ProbeTarget("10.0.0.1", 8080));
    timers.advance(5000);
    assertThat(asked).isEmpty();

    loops.configure(check(9999, 1000), Map.of("web-0", new ProbeTarget("10.0.0.1", 8080)));
    timers.advance(1000);
    assertThat(asked).hasSize(1);
    loops.remove("web-0");
    open.get(0).complete(AgentReply.parse("maint"));
    timers.advance(5000);
    assertThat(answers).isEmpty();
    assertThat(asked).hasSize(1);
    assertThat(timers.pending()).isZero();
  }
}
