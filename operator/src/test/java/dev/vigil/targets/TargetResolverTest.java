package dev.vigil.targets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.runtime.PoolKey;
import dev.vigil.testing.LoopbackDns;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * The resolver against a real loopback DNS server, time from a manual clock: answers arrive, are
 * asked again only when their TTL is due, and a name that stops resolving keeps its last answer
 * until the keep ends.
 */
class TargetResolverTest {
  private static final PoolKey POOL = new PoolKey("shop", "db");
  private static final String NAME = "db.vigil.test";

  @AutoClose private final LoopbackDns dns = LoopbackDns.start();
  private final AtomicLong now = new AtomicLong(1_000_000);

  @AutoClose
  private final TargetResolver resolver =
      new TargetResolver(new DnsLookup(dns.address()), now::get, 16, TargetNetworks.NONE);

  private final List<PoolKey> changes = new CopyOnWriteArrayList<>();

  {
    resolver.onChange(changes::add);
  }

  private ResolvedName name() {
    return resolver.resolve(POOL, List.of(NAME)).names().get(NAME);
  }

  private void awaitChanges(int n) {
    await().atMost(Duration.ofSeconds(20)).until(() -> changes.size() >= n);
  }

  @Test
  void resolvesAsksAgainOnTheTtlAndKeepsTheLastAnswerWhileTheNameFails() {
    dns.answer(NAME, 30, "127.0.0.2");
    assertThat(name().addresses()).isEmpty();
    awaitChanges(1);
    assertThat(name().addresses()).containsExactly("127.0.0.2");
    assertThat(resolver.resolve(POOL, List.of(NAME)).nextAt()).isEqualTo(1_000_000 + 30_000);

    int asked = dns.queries();
    dns.answer(NAME, 30, "127.0.0.3");
    now.addAndGet(29_999);
    name();
    assertThat(dns.queries()).as("not due before the TTL").isEqualTo(asked);

    now.addAndGet(1);
    name();
    awaitChanges(2);
    assertThat(name().addresses()).containsExactly("127.0.0.3");

    dns.servfail(NAME);
    now.addAndGet(30_000);
    name();
    awaitChanges(3);
    ResolvedName failing = name();
    assertThat(failing.failure()).isEqualTo("SERVFAIL");
    assertThat(failing.addresses()).containsExactly("127.0.0.3");
    assertThat(resolver.resolve(POOL, List.of(NAME)).failing()).hasSize(1);

    now.addAndGet(ResolvedName.KEEP_LAST_MS);
    assertThat(name().addresses()).isEmpty();
  }

  @Test
  void forgetsANameThePoolNoLongerHas() {
    dns.answer(NAME, 30, "127.0.0.2");
    name();
    awaitChanges(1);
    assertThat(resolver.resolve(POOL, List.of()).names()).isEmpty();
    assertThat(resolver.resolve(POOL, List.of(NAME)).names().get(NAME).addresses()).isEmpty();
  }
}
