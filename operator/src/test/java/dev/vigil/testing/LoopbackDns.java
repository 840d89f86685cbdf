package dev.vigil.testing;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.handler.codec.dns.DatagramDnsQuery;
import io.netty.handler.codec.dns.DatagramDnsQueryDecoder;
import io.netty.handler.codec.dns.DatagramDnsResponse;
import io.netty.handler.codec.dns.DatagramDnsResponseEncoder;
import io.netty.handler.codec.dns.DefaultDnsRawRecord;
import io.netty.handler.codec.dns.DnsQuestion;
import io.netty.handler.codec.dns.DnsRecordType;
import io.netty.handler.codec.dns.DnsResponseCode;
import io.netty.handler.codec.dns.DnsSection;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real DNS server on a loopback UDP port, for tests (Netty's DNS codec): each name answers A and
 * AAAA records with a TTL, NXDOMAIN, SERVFAIL, or nothing at all; a name it was not told about is
 * NXDOMAIN. Names are matched without the final dot, case-insensitively.
 */
public final class LoopbackDns implements AutoCloseable {
  private sealed interface Reply {}

  private record Records(List<String> addresses, long ttl) implements Reply {}

  private record Code(DnsResponseCode code) implements Reply {}

  private record Silence() implements Reply {}

  private final EventLoopGroup loop =
      new MultiThreadIoEventLoopGroup(
          1, new DefaultThreadFactory("loopback-dns", true), NioIoHandler.newFactory());
  private final Map<String, Reply> replies = new ConcurrentHashMap<>();
  private final AtomicInteger queries = new AtomicInteger();
  private final Channel channel;

  private LoopbackDns() throws InterruptedException {
    channel =
        new Bootstrap()
            .group(loop)
            .channel(NioDatagramChannel.class)
            .handler(
                new ChannelInitializer<DatagramChannel>() {
                  @Override
                  protected void initChannel(DatagramChannel ch) {
                    ch.pipeline()
                        .addLast(new DatagramDnsQueryDecoder())
                        .addLast(new DatagramDnsResponseEncoder())
                        .addLast(new Answering());
                  }
                })
            .bind(new InetSocketAddress("127.0.0.1", 0))
            .sync()
            .channel();
  }

  public static LoopbackDns start() {
    try {
      return new LoopbackDns();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  public InetSocketAddress address() {
    return (InetSocketAddress) channel.localAddress();
  }

  /** {@code host:port}, as {@code --dns-server} takes it. */
  public String flag() {
    return "127.0.0.1:" + address().getPort();
  }

  /** The name answers these addresses (IPv4 as A, IPv6 as AAAA), each with this TTL. */
  public void answer(String name, long ttlSeconds, String... addresses) {
    replies.put(key(name), new Records(List.of(addresses), ttlSeconds));
  }

  public void nxdomain(String name) {
    replies.put(key(name), new Code(DnsResponseCode.NXDOMAIN));
  }

  public void servfail(String name) {
    replies.put(key(name), new Code(DnsResponseCode.SERVFAIL));
  }

  /** Queries for the name are read and never answered. */
  public void silent(String name) {
    replies.put(key(name), new Silence());
  }

  /** Queries received so far, of every name. */
  public int queries() {
    return queries.get();
  }

  private static String key(String name) {
    String n = name.toLowerCase(Locale.ROOT);
    return n.endsWith(".") ? n.substring(0, n.length() - 1) : n;
  }

  private final class Answering extends SimpleChannelInboundHandler<DatagramDnsQuery> {
    @Override
    protected void channelRead0(ChannelHandlerContext ctx, DatagramDnsQuery query) {
      queries.incrementAndGet();
      DnsQuestion question = query.recordAt(DnsSection.QUESTION);
      Reply reply = replies.getOrDefault(key(question.name()), new Code(DnsResponseCode.NXDOMAIN));
      if (reply instanceof Silence) {
        return;
      }
      DatagramDnsResponse response =
          new DatagramDnsResponse(query.recipient(), query.sender(), query.id());
      response.setRecursionAvailable(true);
      response.setAuthoritativeAnswer(true);
      response.addRecord(DnsSection.QUESTION, question);
      if (reply instanceof Code c) {
        response.setCode(c.code());
      } else if (reply instanceof Records r) {
        for (String a : r.addresses()) {
          byte[] bytes = bytes(a);
          DnsRecordType type = bytes.length == 4 ? DnsRecordType.A : DnsRecordType.AAAA;
          if (type.equals(question.type())) {
            response.addRecord(
                DnsSection.ANSWER,
                new DefaultDnsRawRecord(
                    question.name(), type, r.ttl(), Unpooled.wrappedBuffer(bytes)));
          }
        }
      }
      ctx.writeAndFlush(response);
    }
  }

  private static byte[] bytes(String literal) {
    try {
      return InetAddress.getByName(literal).getAddress();
    } catch (UnknownHostException e) {
      throw new IllegalArgumentException(literal, e);
    }
  }

  @Override
  public void close() {
    channel.close().awaitUninterruptibly(2, TimeUnit.SECONDS);
    loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
  }
}
