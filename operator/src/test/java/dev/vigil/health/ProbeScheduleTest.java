package dev.vigil.health;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import org.junit.jupiter.api.Test;

class ProbeScheduleTest {
  private final ProbeSchedule schedule = new ProbeSchedule(new Random(42));

  @Test
  void firstProbesSpreadOverTheInterval() {
    HealthSettings s = HealthSettings.defaults();
    long min = Long.MAX_VALUE;
    long max = Long.MIN_VALUE;
    for (int i = 0; i < 10_000; i++) {
      long d = schedule.firstDelayMs(s);
      min = Math.min(min, d);
      max = Math.max(max, d);
    }
    assertThat(min).isBetween(0L, 50L);
    assertThat(max).isBetween(4_950L, 4_999L);
  }

  @Test
  void laterProbesStayWithinTheJitterBand() {
    HealthSettings s = HealthSettings.defaults();
    for (int i = 0; i < 10_000; i++) {
      assertThat(schedule.nextDelayMs(s)).isBetween(4_500L, 5_500L);
    }
  }

  @Test
  void zeroJitterProbesExactlyEveryInterval() {
    HealthSettings s = HealthSettings.builder().jitterPercent(0).build();
    assertThat(schedule.nextDelayMs(s)).isEqualTo(5_000);
  }
}
