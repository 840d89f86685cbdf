package dev.vigil;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class OperatorCommandTest {

  @Test
  void aBadFlagIsAUsageErrorNamingTheFlagBeforeAnythingStarts() throws Exception {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    PrintStream before = System.err;
    int code;
    System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
    try {
      code = OperatorCommand.run(List.of("--shard-move-rate=150"), Map.of());
    } finally {
      System.setErr(before);
    }
    assertThat(code).isEqualTo(OperatorCommand.USAGE).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("vigil: --shard-move-rate must be a percentage 0..100")
        .contains("run 'vigil operator --help' for the flags");
  }
}
