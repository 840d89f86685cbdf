package dev.vigil.probe;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.random.RandomGenerator;

/**
 * The agent checks of one pool (docs/decision.md, "Admin state and the agent"): per backend, ask
 * its agent every {@code active.agent.interval}, the first time at a random offset in [0, interval)
 * so a pool's agents are not asked in one burst. Its own cadence beside the health check's, on the
 * pool's context: the timers and the answers both run there. At most one question per backend is in
 * flight; a tick that finds one still out is skipped. Answers go to {@link Answers}, never to the
 * rise/fall counters.
 */
public final class AgentLoops implements BackendLoops {
  /** Receives each agent answer on the pool's context. */
  @FunctionalInterface
  public interface Answers {
    void answer(String id, AgentReply reply);
  }

  private final AgentProbe probe;
  private final Timers timers;
  private final RandomGenerator random;
  private final Answers answers;
  private final Map<String, Loop> loops = new HashMap<>();
  private CheckSpec.Agent agent = CheckSpec.Agent.NONE;
  private Duration timeout = CheckSpec.DEFAULT_TIMEOUT;

  public AgentLoops(AgentProbe probe, Timers timers, RandomGenerator random, Answers answers) {
    this.probe = probe;
    this.timers = timers;
    this.random = random;
    this.answers = answers;
  }

  /** One backend's loop; a replaced or removed loop's late answer is dropped. */
  private final class Loop {
    final String id;
    final ProbeTarget target;
    long timer = -1;
    boolean inFlight;
    boolean stopped;

    Loop(String id, ProbeTarget target) {
      this.id = id;
      this.target = target;
    }

    void start() {
      timer = timers.schedule(random.nextLong(agent.interval().toMillis()), this::tick);
    }

    void tick() {
      if (stopped) {
        return;
      }
      timer = timers.schedule(agent.interval().toMillis(), this::tick);
      if (inFlight) {
        return;
      }
      inFlight = true;
      probe
          .ask(target, timeout)
          .onComplete(
              ar ->
                  timers.execute(
                      () -> {
                        inFlight = false;
                        if (!stopped && ar.succeeded()) {
                          answers.answer(id, ar.result());
                        }
                      }));
    }

    void stop() {
      stopped = true;
      if (timer >= 0) {
        timers.cancel(timer);
      }
    }
  }

  /** The pool's check changed: every loop restarts with the new agent settings (or stops). */
  @Override
  public void configure(CheckSpec check, Map<String, ProbeTarget> members) {
    CheckSpec.Agent next = check == null ? CheckSpec.Agent.NONE : check.agent();
    Duration nextTimeout = check == null ? CheckSpec.DEFAULT_TIMEOUT : check.timeout();
    if (next.equals(agent) && nextTimeout.equals(timeout)) {
      return;
    }
    agent = next;
    timeout = nextTimeout;
    loops.values().forEach(Loop::stop);
    loops.clear();
    members.forEach(this::startLoop);
  }

  /** Starts asking a backend's agent (at {@code target}'s IP, on the agent port). */
  @Override
  public void add(String id, ProbeTarget target) {
    Loop old = loops.remove(id);
    if (old != null) {
      old.stop();
    }
    startLoop(id, target);
  }

  private void startLoop(String id, ProbeTarget target) {
    if (!agent.enabled()) {
      return;
    }
    Loop loop = new Loop(id, new ProbeTarget(target.ip(), agent.port()));
    loops.put(id, loop);
    loop.start();
  }

  @Override
  public void remove(String id) {
    Loop loop = loops.remove(id);
    if (loop != null) {
      loop.stop();
    }
  }

  @Override
  public void close() {
    loops.values().forEach(Loop::stop);
    loops.clear();
  }

  /** Backends whose agent is asked (for tests and metrics). */
  public int size() {
    return loops.size();
  }
}
