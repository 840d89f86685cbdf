package dev.vigil.e2e;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.core.AppenderBase;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.slf4j.LoggerFactory;

/**
 * Every WARN and ERROR the test JVM logs (the in-process operator, JOSDK and Fabric8 included),
 * with the messages of their exception chains, so a test can fail on an API call the chart's RBAC
 * refused: JOSDK and the event writer log such failures and go on.
 */
public final class OperatorLog extends AppenderBase<ILoggingEvent> {
  private static final Pattern FORBIDDEN =
      // 403 not as the milliseconds of a time ("18:43:49.403 INFO ...": ImageE2E, once)
      Pattern.compile(
          "(?i)(?<![.:,\\d])\\b403\\b|forbidden|cannot (get|list|watch|create|update|patch|delete)");

  private final List<String> lines = new ArrayList<>();

  /** Attaches a fresh capture to the root logger. */
  public static OperatorLog attach() {
    OperatorLog log = new OperatorLog();
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    log.setContext(root.getLoggerContext());
    log.setName("e2e-capture");
    log.start();
    root.addAppender(log);
    return log;
  }

  public void detach() {
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    root.detachAppender(this);
    stop();
  }

  @Override
  protected synchronized void append(ILoggingEvent e) {
    if (!e.getLevel().isGreaterOrEqual(Level.WARN)) {
      return;
    }
    StringBuilder line =
        new StringBuilder(e.getLevel() + " " + e.getLoggerName() + ": " + e.getFormattedMessage());
    for (IThrowableProxy t = e.getThrowableProxy(); t != null; t = t.getCause()) {
      line.append(" | ").append(t.getClassName()).append(": ").append(t.getMessage());
    }
    lines.add(line.toString());
  }

  public synchronized List<String> lines() {
    return List.copyOf(lines);
  }

  /** The lines that report a request the API server refused (RBAC: 403 Forbidden). */
  public synchronized List<String> forbidden() {
    return lines.stream().filter(OperatorLog::isForbidden).toList();
  }

  /** Whether a log line reports a request the API server refused. */
  public static boolean isForbidden(String line) {
    return FORBIDDEN.matcher(line).find();
  }
}
