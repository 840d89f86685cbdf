package dev.vigil.targets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class TargetNetworksTest {
  @Test
  void theDefaultRefusesLoopbackLinkLocalUnspecifiedAndMulticastInBothFamilies() {
    TargetNetworks d = TargetNetworks.parse(null);
    assertThat(d.refuses("127.0.0.1")).isTrue();
    assertThat(d.refuses("169.254.169.254")).isTrue();
    assertThat(d.refuses("::ffff:169.254.169.254")).as("IPv4-mapped").isTrue();
    assertThat(d.refuses("::1")).isTrue();
    assertThat(d.refuses("fe80::1")).isTrue();
    assertThat(d.refuses("0.0.0.0")).isTrue();
    assertThat(d.refuses("224.0.0.1")).isTrue();
    assertThat(d.refuses("10.0.0.1")).isFalse();
    assertThat(d.refuses("198.18.0.12")).isFalse();
    assertThat(d.refuses("2001:db8::1")).isFalse();
    assertThat(d.refuses("db.example.com")).as("not an IP literal").isTrue();
  }

  @Test
  void noneRefusesNothingAndAListIsTheAdmins() {
    assertThat(TargetNetworks.parse("none").refuses("127.0.0.1")).isFalse();
    TargetNetworks own = TargetNetworks.parse("10.0.0.0/8, 192.168.1.0/24");
    assertThat(own.refuses("10.200.0.1")).isTrue();
    assertThat(own.refuses("192.168.1.7")).isTrue();
    assertThat(own.refuses("192.168.2.7")).isFalse();
    assertThat(own.refuses("127.0.0.1")).isFalse();
    assertThatThrownBy(() -> TargetNetworks.parse("10.0.0.0/33"))
        .hasMessageContaining("--refuse-target-networks must be CIDRs");
  }
}
