package dev.vigil.ops;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.JsonEncoder;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.OutputStreamAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigil.health.AvailabilitySnapshot;
import dev.vigil.publish.EventRecorder;
import dev.vigil.publish.TransitionReporter;
import dev.vigil.runtime.PoolKey;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** --log-format json: one JSON object per line, transition fields as key-value pairs. */
class LogFormatTest {
  private final ObjectMapper json = new ObjectMapper();

  @Test
  void aTransitionIsOneJsonLineWithPoolBackendStatesAndReason() throws Exception {
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    Logger transitions = context.getLogger("dev.vigil.transitions");
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    OutputStreamAppender<ILoggingEvent> appender = new OutputStreamAppender<>();
    appender.setContext(context);
    appender.setEncoder(LogFormat.jsonEncoder(context));
    appender.setOutputStream(out);
    appender.start();
    transitions.addAppender(appender);
    try {
      TransitionReporter reporter =
          new TransitionReporter(
              new EventRecorder(e -> {}, "vigil", 10, 60_000), new SimpleMeterRegistry());
      PoolKey pool = new PoolKey("shop", "web");
      reporter.stateChanged(pool, "web-1", "UP", "DOWN", "3 probes failed: status 503");
      reporter.ejected(pool, "web-2", 1_700_000_000_000L, "5 consecutive errors");
      reporter.panicChanged(pool, true, new AvailabilitySnapshot.Counts(3, 1, 1, 2, 0, 0, 0, 3, 0));
    } finally {
      transitions.detachAppender(appender);
      appender.stop();
    }

    String[] lines = out.toString(StandardCharsets.UTF_8).strip().split("\n");
    assertThat(lines).hasSize(3);
    JsonNode down = json.readTree(lines[0]);
    assertThat(down.get("level").asText()).isEqualTo("INFO");
    assertThat(down.get("loggerName").asText()).isEqualTo("dev.vigil.transitions");
    assertThat(down.get("timestamp").asLong()).isPositive();
    assertThat(down.get("formattedMessage").asText())
        .isEqualTo(
            "transition pool=shop/web backend=web-1 from=UP to=DOWN"
                + " reason=\"3 probes failed: status 503\"");
    assertThat(fields(down))
        .containsEntry("pool", "shop/web")
        .containsEntry("backend", "web-1")
        .containsEntry("from", "UP")
        .containsEntry("to", "DOWN")
        .containsEntry("reason", "3 probes failed: status 503");
    assertThat(down.has("message")).as("raw pattern left out").isFalse();

    assertThat(fields(json.readTree(lines[1])))
        .containsEntry("backend", "web-2")
        .containsEntry("to", "EJECTED")
        .containsEntry("until", "2023-11-14T22:13:20Z");
    assertThat(fields(json.readTree(lines[2])))
        .containsEntry("panic", "true")
        .containsEntry("available", "1");
  }

  @Test
  void jsonReplacesTheRootConsoleEncoderAndTextKeepsIt() {
    LoggerContext context = new LoggerContext();
    ConsoleAppender<ILoggingEvent> console = new ConsoleAppender<>();
    console.setContext(context);
    PatternLayoutEncoder pattern = new PatternLayoutEncoder();
    pattern.setContext(context);
    pattern.setPattern("%msg%n");
    pattern.start();
    console.setEncoder(pattern);
    console.start();
    context.getLogger(Logger.ROOT_LOGGER_NAME).addAppender(console);

    LogFormat.apply(context, "text");
    assertThat(console.getEncoder()).isSameAs(pattern);
    LogFormat.apply(context, "json");
    assertThat(console.getEncoder()).isInstanceOf(JsonEncoder.class);
    assertThat(console.isStarted()).isTrue();
    context.stop();
  }

  /** JsonEncoder writes key-value pairs as {@code "kvpList": [{"k": "v"}, ...]}. */
  private static Map<String, String> fields(JsonNode line) {
    Map<String, String> out = new HashMap<>();
    for (JsonNode pair : line.get("kvpList")) {
      pair.fields().forEachRemaining(e -> out.put(e.getKey(), e.getValue().asText()));
    }
    return out;
  }
}
