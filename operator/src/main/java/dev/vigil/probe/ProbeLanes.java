package dev.vigil.probe;

/**
 * Where one pool's probes may run (issue 15): its own context first, and once that carries {@link
 * #ratePerLane()} probes a second, further backends go to other event loops, up to {@link #max()}
 * lanes in all. A lane is a probe scheduler of its own on its own event loop; its results come back
 * to the pool's context in batches. Backends never move between lanes, so a cadence is never cut.
 */
public interface ProbeLanes {

  /** Only the pool's own context: every probe runs where the pool's decisions are made. */
  ProbeLanes SINGLE =
      new ProbeLanes() {
        @Override
        public int max() {
          return 1;
        }

        @Override
        public double ratePerLane() {
          return Double.POSITIVE_INFINITY;
        }

        @Override
        public Timers lane(int index) {
          throw new IllegalArgumentException("one lane only");
        }
      };

  /** Lanes per pool at most, the pool's own context included; at least 1. */
  int max();

  /** Probes per second one lane takes before the next backend goes to a lane of its own. */
  double ratePerLane();

  /** The timers of lane {@code index} (1 to {@code max() - 1}): an event loop not the pool's. */
  Timers lane(int index);
}
