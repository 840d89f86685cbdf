package dev.vigil.targets;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The TTL bounds and the kept answer, on explicit times. */
class ResolvedNameTest {
  private static final long T0 = 1_000_000;

  @Test
  void theTtlIsBoundedBelowAndAbove() {
    ResolvedName n = ResolvedName.pending("db");
    assertThat(n.answered(DnsAnswer.of(List.of("10.0.0.1"), 0), T0).refreshAt())
        .isEqualTo(T0 + 5_000);
    assertThat(n.answered(DnsAnswer.of(List.of("10.0.0.1"), 60), T0).refreshAt())
        .isEqualTo(T0 + 60_000);
    assertThat(n.answered(DnsAnswer.of(List.of("10.0.0.1"), 86_400), T0).refreshAt())
        .isEqualTo(T0 + 300_000);
  }

  @Test
  void aFailingNameKeepsItsLastAnswerForFiveMinutesFromTheFirstFailure() {
    ResolvedName ok =
        ResolvedName.pending("db").answered(DnsAnswer.of(List.of("10.0.0.2", "10.0.0.1"), 30), T0);
    assertThat(ok.addresses()).containsExactly("10.0.0.1", "10.0.0.2");

    ResolvedName failing = ok.failed("NXDOMAIN", T0 + 30_000);
    assertThat(failing.addresses()).containsExactly("10.0.0.1", "10.0.0.2");
    assertThat(failing.refreshAt()).isEqualTo(T0 + 35_000);
    assertThat(failing.describe()).contains("db", "NXDOMAIN", "kept until");

    ResolvedName still = failing.failed("timeout", T0 + 30_000 + 299_999);
    assertThat(still.addresses()).hasSize(2);
    assertThat(still.failingSince()).isEqualTo(T0 + 30_000);

    assertThat(still.at(T0 + 30_000 + 300_000).addresses()).isEmpty();
    assertThat(still.at(T0 + 30_000 + 300_000).describe()).contains("no address is published");
    assertThat(still.nextAt()).as("the keep ends before the next retry").isEqualTo(T0 + 330_000);
  }

  @Test
  void anAnswerEndsTheFailureAndANameThatNeverResolvedHasNoAddress() {
    ResolvedName never = ResolvedName.pending("db").failed("SERVFAIL", T0);
    assertThat(never.addresses()).isEmpty();
    ResolvedName back = never.answered(DnsAnswer.of(List.of("10.0.0.3"), 10), T0 + 5_000);
    assertThat(back.failing()).isFalse();
    assertThat(back.failingSince()).isEqualTo(-1);
    assertThat(back.describe()).isNull();
  }

  @Test
  void keepsAtMost64AddressesPerName() {
    List<String> many =
        java.util.stream.IntStream.range(0, 100).mapToObj(i -> "10.1.0." + i).toList();
    assertThat(ResolvedName.pending("db").answered(DnsAnswer.of(many, 10), T0).addresses())
        .hasSize(64);
  }
}
