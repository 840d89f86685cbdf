package dev.vigil.security;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Files a port's TLS is made of (a Secret or ConfigMap mounted as a volume, which the kubelet
 * replaces on rotation), read at start and re-read every {@code checkEveryMs} on a worker thread:
 * when any of them changed, {@code apply} gets the new contents; while it fails (a half-written
 * rotation), the contents applied last stay current, and the next check tries again. The serving
 * certificate ({@link ServingCertificate}) and the client CA bundle ({@link ClientCertificates})
 * rotate this way.
 */
final class WatchedFiles implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(WatchedFiles.class);

  private final Vertx vertx;
  private final List<Path> files;
  private final String what;
  private final Function<List<byte[]>, Future<Void>> apply;
  private volatile List<byte[]> current;
  private long timer = -1;

  /**
   * Reads the files now; one that cannot be read fails with a message naming {@code what}.
   *
   * @param apply takes new contents (in the order of {@code files}) once they changed; a failed
   *     future (or an exception) keeps the old ones
   */
  WatchedFiles(
      Vertx vertx, List<Path> files, String what, Function<List<byte[]>, Future<Void>> apply) {
    this.vertx = vertx;
    this.files = List.copyOf(files);
    this.what = what;
    this.apply = apply;
    try {
      this.current = read();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the " + what + ": " + e, e);
    }
  }

  /** The contents as applied last (at start: as read), in the order of the files. */
  List<byte[]> current() {
    return current;
  }

  /** Starts checking the files every {@code ms}. */
  void checkEvery(long ms) {
    timer = vertx.setPeriodic(ms, id -> check());
  }

  /** Reads the files once; when they changed, applies them. Completes true when applied. */
  Future<Boolean> check() {
    return vertx
        .executeBlocking(this::read)
        .compose(
            read -> {
              if (same(read, current)) {
                return Future.succeededFuture(false);
              }
              return Future.succeededFuture(read)
                  .compose(apply)
                  .map(
                      v -> {
                        current = read;
                        LOG.info("applied the rotated {} from {}", what, files);
                        return true;
                      });
            })
        .recover(
            e -> {
              LOG.warn("keeping the current {}: {} did not load: {}", what, files, e.toString());
              return Future.succeededFuture(false);
            });
  }

  private List<byte[]> read() throws IOException {
    List<byte[]> read = new ArrayList<>(files.size());
    for (Path f : files) {
      read.add(Files.readAllBytes(f));
    }
    return List.copyOf(read);
  }

  private static boolean same(List<byte[]> a, List<byte[]> b) {
    for (int i = 0; i < a.size(); i++) {
      if (!Arrays.equals(a.get(i), b.get(i))) {
        return false;
      }
    }
    return true;
  }

  @Override
  public void close() {
    if (timer >= 0) {
      vertx.cancelTimer(timer);
    }
  }
}
