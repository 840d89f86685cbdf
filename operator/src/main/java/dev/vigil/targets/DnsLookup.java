package dev.vigil.targets;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.handler.codec.dns.DefaultDnsQuestion;
import io.netty.handler.codec.dns.DnsRawRecord;
import io.netty.handler.codec.dns.DnsRecord;
import io.netty.handler.codec.dns.DnsRecordType;
import io.netty.resolver.dns.DnsErrorCauseException;
import io.netty.resolver.dns.DnsNameResolver;
import io.netty.resolver.dns.DnsNameResolverBuilder;
import io.netty.resolver.dns.DnsNameResolverTimeoutException;
import io.netty.resolver.dns.DnsServerAddressStreamProviders;
import io.netty.resolver.dns.NoopAuthoritativeDnsServerCache;
import io.netty.resolver.dns.NoopDnsCache;
import io.netty.resolver.dns.NoopDnsCnameCache;
import io.netty.resolver.dns.SingletonDnsServerAddressStreamProvider;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.Future;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * Netty's DNS resolver on one event loop thread of its own ({@code vigil-dns}), with Netty's caches
 * off (the TTL rules are {@link ResolvedName}'s): each lookup asks A and AAAA and reads the records
 * with their TTLs. The nameservers are {@code /etc/resolv.conf}'s (with its search domains and
 * ndots) unless one server is given ({@code --dns-server}).
 */
public final class DnsLookup implements NameLookup {
  public static final long QUERY_TIMEOUT_MS = 2_000;

  private final EventLoopGroup loop =
      new MultiThreadIoEventLoopGroup(
          1, new DefaultThreadFactory("vigil-dns", true), NioIoHandler.newFactory());
  private final DnsNameResolver resolver;

  /**
   * @param server the one nameserver to ask; null: {@code /etc/resolv.conf}'s
   */
  public DnsLookup(InetSocketAddress server) {
    DnsNameResolverBuilder b =
        new DnsNameResolverBuilder(loop.next())
            .datagramChannelType(NioDatagramChannel.class)
            .resolveCache(NoopDnsCache.INSTANCE)
            .cnameCache(NoopDnsCnameCache.INSTANCE)
            .authoritativeDnsServerCache(NoopAuthoritativeDnsServerCache.INSTANCE)
            .queryTimeoutMillis(QUERY_TIMEOUT_MS)
            .maxQueriesPerResolve(8);
    b.nameServerProvider(
        server == null
            ? DnsServerAddressStreamProviders.platformDefault()
            : new SingletonDnsServerAddressStreamProvider(server));
    resolver = b.build();
  }

  @Override
  public CompletionStage<DnsAnswer> lookup(String hostname) {
    CompletableFuture<List<DnsRecord>> a = records(hostname, DnsRecordType.A);
    CompletableFuture<List<DnsRecord>> aaaa = records(hostname, DnsRecordType.AAAA);
    return a.handle((v4, e4) -> new Half(v4, e4))
        .thenCombine(aaaa.handle((v6, e6) -> new Half(v6, e6)), DnsLookup::combine);
  }

  private record Half(List<DnsRecord> records, Throwable error) {}

  /** Both families' addresses; a failure only when neither gave one (A's reason first). */
  private static DnsAnswer combine(Half v4, Half v6) {
    List<String> addresses = new ArrayList<>();
    long ttl = Long.MAX_VALUE;
    for (Half h : List.of(v4, v6)) {
      if (h.records() == null) {
        continue;
      }
      for (DnsRecord r : h.records()) {
        try {
          String address = address(r);
          if (address != null) {
            addresses.add(address);
            ttl = Math.min(ttl, r.timeToLive());
          }
        } finally {
          ReferenceCountUtil.release(r);
        }
      }
    }
    if (!addresses.isEmpty()) {
      return DnsAnswer.of(addresses, ttl);
    }
    Throwable error = v4.error() != null ? v4.error() : v6.error();
    return DnsAnswer.failed(error == null ? "no address" : reason(error));
  }

  private static String address(DnsRecord r) {
    if (!(r instanceof DnsRawRecord raw)
        || (r.type() != DnsRecordType.A && r.type() != DnsRecordType.AAAA)) {
      return null;
    }
    ByteBuf content = raw.content();
    byte[] bytes = ByteBufUtil.getBytes(content);
    if (bytes.length != 4 && bytes.length != 16) {
      return null;
    }
    try {
      return InetAddress.getByAddress(bytes).getHostAddress();
    } catch (UnknownHostException e) {
      return null;
    }
  }

  /** NXDOMAIN, SERVFAIL, REFUSED, timeout, else the resolver's message. */
  static String reason(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause()) {
      if (t instanceof DnsNameResolverTimeoutException) {
        return "timeout";
      }
      if (t instanceof DnsErrorCauseException dns) {
        return switch (dns.getCode().intValue()) {
          case 2 -> "SERVFAIL";
          case 3 -> "NXDOMAIN";
          case 5 -> "REFUSED";
          default -> dns.getCode().toString();
        };
      }
    }
    String message = error.getMessage() == null ? error.toString() : error.getMessage();
    if (message.contains("timeout") || message.contains("timed out")) {
      return "timeout";
    }
    return message.length() > 200 ? message.substring(0, 200) : message;
  }

  private CompletableFuture<List<DnsRecord>> records(String hostname, DnsRecordType type) {
    CompletableFuture<List<DnsRecord>> out = new CompletableFuture<>();
    Future<List<DnsRecord>> f = resolver.resolveAll(new DefaultDnsQuestion(hostname, type));
    f.addListener(
        done -> {
          if (done.isSuccess()) {
            out.complete(f.getNow());
          } else {
            out.completeExceptionally(done.cause());
          }
        });
    return out;
  }

  @Override
  public void close() {
    resolver.close();
    loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
  }
}
