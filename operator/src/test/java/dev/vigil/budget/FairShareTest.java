package dev.vigil.budget;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class FairShareTest {
  @Test
  void smallClaimsAreMetWholeAndTheRestSplitEqually() {
    double[] shares = FairShare.of(100, new double[] {0, 0, 0}, new double[] {10, 80, 80});
    assertThat(shares[0]).isEqualTo(10);
    assertThat(shares[1]).isCloseTo(45, within(1e-9));
    assertThat(shares[2]).isCloseTo(45, within(1e-9));
  }

  @Test
  void floorsAreKept() {
    double[] shares = FairShare.of(100, new double[] {60, 0}, new double[] {200, 200});
    assertThat(shares[0]).isCloseTo(60, within(1e-9));
    assertThat(shares[1]).isCloseTo(40, within(1e-9));
  }
}
