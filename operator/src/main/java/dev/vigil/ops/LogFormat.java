package dev.vigil.ops;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.JsonEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.OutputStreamAppender;
import java.util.Iterator;
import org.slf4j.ILoggerFactory;
import org.slf4j.LoggerFactory;

/**
 * Switches the log output between logback.xml's text lines and one JSON object per line ({@code
 * --log-format json}), chosen once at start. The demo and the tests keep text.
 *
 * <p>JSON lines carry {@code timestamp}, {@code level}, {@code threadName}, {@code loggerName},
 * {@code mdc}, {@code kvpList} (the structured fields of transition lines: {@code pool}, {@code
 * backend}, {@code from}, {@code to}, {@code reason}), {@code formattedMessage} and {@code
 * throwable}.
 */
public final class LogFormat {
  private LogFormat() {}

  /** Applies the format to the running logback context; {@code text} changes nothing. */
  public static void apply(String format) {
    ILoggerFactory factory = LoggerFactory.getILoggerFactory();
    if (factory instanceof LoggerContext context) {
      apply(context, format);
    }
  }

  /** Gives every output-stream appender of the root logger a JSON encoder when format is json. */
  public static void apply(LoggerContext context, String format) {
    if (!"json".equals(format)) {
      return;
    }
    Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
    for (Iterator<Appender<ILoggingEvent>> it = root.iteratorForAppenders(); it.hasNext(); ) {
      if (it.next() instanceof OutputStreamAppender<ILoggingEvent> appender) {
        appender.stop();
        appender.setEncoder(jsonEncoder(context));
        appender.start();
      }
    }
  }

  /**
   * For a command whose standard output is its answer ({@code why}, {@code top}): log lines go to
   * standard error, warnings and errors only, without Fabric8's note that Vigil's API is v1alpha1.
   */
  public static void toStandardError() {
    if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext context)) {
      return;
    }
    Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
    root.setLevel(Level.WARN);
    context
        .getLogger("io.fabric8.kubernetes.client.dsl.internal.VersionUsageUtils")
        .setLevel(Level.OFF);
    for (Iterator<Appender<ILoggingEvent>> it = root.iteratorForAppenders(); it.hasNext(); ) {
      if (it.next() instanceof ConsoleAppender<ILoggingEvent> console) {
        console.stop();
        console.setTarget("System.err");
        console.start();
      }
    }
  }

  /** The JSON encoder Vigil uses: one object per line, the formatted message, no raw arguments. */
  public static JsonEncoder jsonEncoder(LoggerContext context) {
    JsonEncoder encoder = new JsonEncoder();
    encoder.setContext(context);
    encoder.setWithSequenceNumber(false);
    encoder.setWithNanoseconds(false);
    encoder.setWithContext(false);
    encoder.setWithMessage(false);
    encoder.setWithArguments(false);
    encoder.setWithFormattedMessage(true);
    encoder.start();
    return encoder;
  }
}
