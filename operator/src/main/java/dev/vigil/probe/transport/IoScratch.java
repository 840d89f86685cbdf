package dev.vigil.probe.transport;

import io.netty.util.concurrent.FastThreadLocal;
import java.nio.ByteBuffer;

/**
 * The buffers of one event-loop thread that plain connections read and write through: an array
 * handed to receivers (valid only during {@code onData}), and for {@link EpollConnection} the
 * direct buffer the kernel reads into and writes from. One per thread, never shared across threads.
 */
final class IoScratch {
  static final int CHUNK = 8 * 1024;

  private static final FastThreadLocal<IoScratch> CURRENT =
      new FastThreadLocal<>() {
        @Override
        protected IoScratch initialValue() {
          return new IoScratch();
        }
      };

  final byte[] array = new byte[CHUNK];
  private ByteBuffer direct; // on first use: NIO channels never need it

  /** The calling event-loop thread's buffers. */
  static IoScratch current() {
    return CURRENT.get();
  }

  ByteBuffer direct() {
    if (direct == null) {
      direct = ByteBuffer.allocateDirect(CHUNK);
    }
    return direct;
  }
}
