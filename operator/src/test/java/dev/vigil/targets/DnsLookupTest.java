package dev.vigil.targets;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.testing.LoopbackDns;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/** Netty's resolver as Vigil drives it, against a real DNS server on a loopback port. */
class DnsLookupTest {
  @AutoClose private final LoopbackDns dns = LoopbackDns.start();
  @AutoClose private final DnsLookup lookup = new DnsLookup(dns.address());

  private DnsAnswer lookup(String name) throws Exception {
    return lookup.lookup(name).toCompletableFuture().get(20, TimeUnit.SECONDS);
  }

  @Test
  void readsEveryAAndAaaaAnswerWithTheSmallestTtl() throws Exception {
    dns.answer("db.vigil.test", 42, "127.0.0.2", "127.0.0.3", "::1");
    DnsAnswer a = lookup("db.vigil.test");
    assertThat(a.ok()).isTrue();
    assertThat(a.addresses())
        .containsExactlyInAnyOrder("127.0.0.2", "127.0.0.3", "0:0:0:0:0:0:0:1");
    assertThat(a.ttlSeconds()).isEqualTo(42);
  }

  @Test
  void anIpv4OnlyNameResolvesThoughItsAaaaHasNoRecord() throws Exception {
    dns.answer("v4.vigil.test", 7, "127.0.0.9");
    assertThat(lookup("v4.vigil.test")).isEqualTo(DnsAnswer.of(java.util.List.of("127.0.0.9"), 7));
  }

  @Test
  void namesNxdomain() throws Exception {
    dns.nxdomain("gone.vigil.test");
    assertThat(lookup("gone.vigil.test").failure()).isEqualTo("NXDOMAIN");
  }

  @Test
  void namesServfail() throws Exception {
    dns.servfail("broken.vigil.test");
    assertThat(lookup("broken.vigil.test").failure()).isEqualTo("SERVFAIL");
  }

  @Test
  void aSilentServerIsATimeout() throws Exception {
    dns.silent("quiet.vigil.test");
    assertThat(lookup("quiet.vigil.test").failure()).isEqualTo("timeout");
  }
}
