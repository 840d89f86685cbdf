package dev.vigil.security;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.net.TrustOptions;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateFactory;
import java.security.cert.CertificateNotYetValidException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.function.LongSupplier;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.net.ssl.X509TrustManager;
import org.bouncycastle.asn1.ASN1Encodable;
import org.bouncycastle.asn1.ASN1String;
import org.bouncycastle.asn1.x500.AttributeTypeAndValue;
import org.bouncycastle.asn1.x500.RDN;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x500.style.IETFUtils;

/**
 * Client certificates as callers' identities (docs/passive.md, "Client certificates"): those a CA
 * of the bundle an admin names ({@code --intake-client-ca}) issued, mapped as the API server maps
 * its {@code --client-ca-file} certificates: the subject's CN is the user name, its O values are
 * the groups (with {@code system:authenticated}, as the API server adds it).
 *
 * <p>As the API server does, the port asks every caller for a certificate and lets any through the
 * handshake ({@link #trustOptions}: a caller with none, or with one this bundle did not issue,
 * reaches the request and may still authenticate with a token); each request's certificate is
 * verified here against the bundle as read last ({@link #verify}), once per TLS session and bundle,
 * so a refusal can say why (expired, another CA) in a 401 rather than in a handshake alert. The
 * handshake still proves the caller holds the certificate's key (TLS CertificateVerify), and its
 * CertificateRequest names the bundle's CAs, so a client with several certificates sends the one
 * they issued.
 *
 * <p>The bundle's file is re-read every {@code checkEveryMs} ({@link WatchedFiles}, as the serving
 * certificate): a rotated bundle applies to the next request without a restart; one that does not
 * load is logged and the old one kept.
 */
public final class ClientCertificates implements AutoCloseable {
  /** The group every authenticated caller is in, as the API server adds it. */
  public static final String AUTHENTICATED = "system:authenticated";

  /** How long a refusal is kept on its session (a certificate not valid yet may become valid). */
  private static final long REFUSAL_KEPT_MS = 10_000;

  private static final String SESSION_VALUE = "dev.vigil.client-certificate";

  /**
   * What a request's client certificate says: the identity it carries, or why it was refused, or
   * neither (none was sent).
   */
  public record Verdict(Identity identity, String refusal) {
    /** No certificate was sent, or the port trusts no CA for them. */
    public static final Verdict NONE = new Verdict(null, null);

    public boolean verified() {
      return identity != null;
    }

    /** {@code "; <refusal>"} for a refused certificate, else empty: for a 401's message. */
    public String refusalNote() {
      return refusal == null ? "" : "; " + refusal;
    }
  }

  /** The bundle as read last: its CAs, a verifier over them, numbered to tell bundles apart. */
  private record Bundle(long generation, X509Certificate[] cas, X509TrustManager verifier) {}

  /** A verdict kept on its TLS session, for the bundle it was made with, until {@code untilMs}. */
  private record Kept(long generation, long untilMs, Verdict verdict) {}

  private final Path file;
  private final LongSupplier clock;
  private final WatchedFiles watch;
  private volatile Bundle bundle;

  /**
   * Reads the bundle now: a file that cannot be read, or holds no PEM certificate, fails with a
   * message naming it (the operator does not start).
   */
  public ClientCertificates(Vertx vertx, Path file, LongSupplier clock) {
    this.file = file;
    this.clock = clock;
    this.watch = new WatchedFiles(vertx, List.of(file), "--intake-client-ca bundle", this::rotate);
    this.bundle = load(watch.current().get(0), 1);
  }

  /** Starts checking the file every {@code ms}; returns this. */
  public ClientCertificates checkEvery(long ms) {
    watch.checkEvery(ms);
    return this;
  }

  /** Reads the file once; when it changed and loads, it is the bundle from now on (true). */
  public Future<Boolean> check() {
    return watch.check();
  }

  private Future<Void> rotate(List<byte[]> read) {
    bundle = load(read.get(0), bundle.generation() + 1);
    return Future.succeededFuture();
  }

  /**
   * The port's trust at the handshake: it asks for a certificate, lets every one through (each
   * request's is verified by {@link #verify}), and names the bundle's CAs as read last.
   */
  public TrustOptions trustOptions() {
    return TrustOptions.wrap(new AnyAtHandshake());
  }

  /**
   * What the session's client certificate says, verified against the bundle as read last: its
   * validity now, its chain to a CA of the bundle (key usages included, as for any TLS client), and
   * a CN. Kept on the session until the certificate expires or the bundle changes.
   */
  public Verdict verify(SSLSession session) {
    X509Certificate[] chain = chain(session);
    if (chain == null) {
      return Verdict.NONE;
    }
    Bundle b = bundle;
    long now = clock.getAsLong();
    if (kept(session) instanceof Kept k && k.generation() == b.generation() && now < k.untilMs()) {
      return k.verdict();
    }
    Verdict v = check(b, chain, now);
    long until = v.verified() ? chain[0].getNotAfter().getTime() : now + REFUSAL_KEPT_MS;
    keep(session, new Kept(b.generation(), until, v));
    return v;
  }

  private Verdict check(Bundle b, X509Certificate[] chain, long now) {
    X509Certificate leaf = chain[0];
    String subject = "the client certificate " + leaf.getSubjectX500Principal().getName();
    try {
      leaf.checkValidity(new Date(now));
    } catch (CertificateExpiredException e) {
      return refused(subject + " expired at " + leaf.getNotAfter().toInstant());
    } catch (CertificateNotYetValidException e) {
      return refused(subject + " is not valid before " + leaf.getNotBefore().toInstant());
    }
    try {
      b.verifier().checkClientTrusted(chain, leaf.getPublicKey().getAlgorithm());
    } catch (CertificateException | RuntimeException e) {
      return refused(
          subject
              + " (issuer "
              + leaf.getIssuerX500Principal().getName()
              + ") does not verify against the CAs in "
              + file
              + ": "
              + innermost(e));
    }
    Identity who = identity(leaf);
    return who == null
        ? refused(subject + " has no CN: the CN is the user name")
        : new Verdict(who, null);
  }

  /**
   * The identity of a certificate as the API server maps it: the CN is the user name (the last one,
   * as Go's {@code pkix.Name} reads it), every O a group; null without a CN.
   */
  static Identity identity(X509Certificate leaf) {
    X500Name name = X500Name.getInstance(leaf.getSubjectX500Principal().getEncoded());
    String user = null;
    List<String> groups = new ArrayList<>();
    for (RDN rdn : name.getRDNs()) {
      for (AttributeTypeAndValue a : rdn.getTypesAndValues()) {
        if (a.getType().equals(BCStyle.CN)) {
          user = text(a.getValue());
        } else if (a.getType().equals(BCStyle.O)) {
          groups.add(text(a.getValue()));
        }
      }
    }
    if (user == null || user.isBlank()) {
      return null;
    }
    if (!groups.contains(AUTHENTICATED)) {
      groups.add(AUTHENTICATED);
    }
    return new Identity(user, null, groups, null);
  }

  private static String text(ASN1Encodable value) {
    return value instanceof ASN1String s ? s.getString() : IETFUtils.valueToString(value);
  }

  private static Verdict refused(String why) {
    return new Verdict(null, why);
  }

  private static String innermost(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
  }

  /** The session's client certificate chain, or null when it has none. */
  private static X509Certificate[] chain(SSLSession session) {
    if (session == null) {
      return null;
    }
    Certificate[] peer;
    try {
      peer = session.getPeerCertificates();
    } catch (SSLPeerUnverifiedException e) {
      return null;
    }
    if (peer == null || peer.length == 0) {
      return null;
    }
    X509Certificate[] chain = new X509Certificate[peer.length];
    for (int i = 0; i < peer.length; i++) {
      if (!(peer[i] instanceof X509Certificate x)) {
        return null;
      }
      chain[i] = x;
    }
    return chain;
  }

  private static Object kept(SSLSession session) {
    try {
      return session.getValue(SESSION_VALUE);
    } catch (RuntimeException e) {
      return null; // a session that keeps no values: verify each time
    }
  }

  private static void keep(SSLSession session, Kept kept) {
    try {
      session.putValue(SESSION_VALUE, kept);
    } catch (RuntimeException e) {
      // a session that keeps no values: verify each time
    }
  }

  /** The bundle in a PEM file's bytes; fails naming the file when it holds no certificate. */
  private Bundle load(byte[] pem, long generation) {
    List<X509Certificate> cas = new ArrayList<>();
    try {
      for (Certificate c :
          CertificateFactory.getInstance("X.509")
              .generateCertificates(new ByteArrayInputStream(pem))) {
        if (c instanceof X509Certificate x) {
          cas.add(x);
        }
      }
    } catch (CertificateException e) {
      throw new IllegalArgumentException(
          "--intake-client-ca " + file + ": not a PEM bundle of certificates: " + e.getMessage(),
          e);
    }
    if (cas.isEmpty()) {
      throw new IllegalArgumentException(
          "--intake-client-ca " + file + ": no PEM certificate in it");
    }
    return new Bundle(generation, cas.toArray(X509Certificate[]::new), verifier(cas));
  }

  private X509TrustManager verifier(List<X509Certificate> cas) {
    try {
      KeyStore anchors = KeyStore.getInstance("PKCS12");
      anchors.load(null, null);
      for (int i = 0; i < cas.size(); i++) {
        anchors.setCertificateEntry("ca-" + i, cas.get(i));
      }
      TrustManagerFactory tmf = TrustManagerFactory.getInstance("PKIX");
      tmf.init(anchors);
      for (TrustManager tm : tmf.getTrustManagers()) {
        if (tm instanceof X509TrustManager x) {
          return x;
        }
      }
      throw new IllegalStateException("the JVM's PKIX trust manager factory made no X.509 one");
    } catch (IOException | GeneralSecurityException e) {
      throw new IllegalArgumentException(
          "--intake-client-ca " + file + ": the CAs do not load: " + e.getMessage(), e);
    }
  }

  /**
   * The handshake's side: any client certificate passes here ({@link #verify} decides per request),
   * the CAs named are the bundle's as read last, and no server is trusted (a server port never
   * checks one).
   */
  private final class AnyAtHandshake extends X509ExtendedTrustManager {
    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) {}

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) {}

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) {}

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType)
        throws CertificateException {
      throw new CertificateException("a server port trusts no server");
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
        throws CertificateException {
      throw new CertificateException("a server port trusts no server");
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
        throws CertificateException {
      throw new CertificateException("a server port trusts no server");
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return bundle.cas().clone();
    }
  }

  @Override
  public void close() {
    watch.close();
  }
}
