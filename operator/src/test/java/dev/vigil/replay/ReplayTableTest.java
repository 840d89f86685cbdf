package dev.vigil.replay;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The replay protocol as a table: each case is flags and a script of {@code input => output} lines
 * (several output lines separated by {@code ;}, none written as {@code =>} alone).
 */
class ReplayTableTest {

  static Stream<Arguments> cases() {
    return Stream.of(
        // ---- docs/design.md §2.1 flap damping ----
        c(
            "the flap that takes the merit above suppress damps; released when it decays to reuse",
            "--rise 1 --fall 1 --damping-half-life-ms 1000",
            """
            POOL a b => OK
            PROBE a REFUSED => FAIL
            PROBE a HTTP/1.1 200 OK => PASS
            PROBE a REFUSED => FAIL
            DAMPED => none
            PROBE a HTTP/1.1 200 OK => PASS
            DAMPED => a
            STATUS => a UP; b UP
            HEALTHY => a,b
            AVAILABLE => b
            AT 2415 => OK
            DAMPED => a
            AT 2416 => OK
            DAMPED => none
            AVAILABLE => a,b
            """),
        c(
            "damping is off without --damping-half-life-ms",
            "--rise 1 --fall 1 --damping-penalty 5000",
            """
            POOL a => OK
            PROBE a REFUSED => FAIL
            PROBE a HTTP/1.1 200 OK => PASS
            PROBE a REFUSED => FAIL
            PROBE a HTTP/1.1 200 OK => PASS
            DAMPED => none
            AVAILABLE => a
            """),
        c(
            "a ceiling at the suppress threshold never damps",
            "--rise 1 --fall 1 --damping-half-life-ms 1000 --damping-max-suppress-ms 2000",
            """
            POOL a => OK
            PROBE a REFUSED => FAIL
            PROBE a HTTP/1.1 200 OK => PASS
            PROBE a REFUSED => FAIL
            PROBE a HTTP/1.1 200 OK => PASS
            PROBE a REFUSED => FAIL
            PROBE a HTTP/1.1 200 OK => PASS
            DAMPED => none
            """),
        c(
            "a damped backend that goes Down stays damped; in panic it is published",
            "--rise 1 --fall 1 --damping-half-life-ms 60000 --damping-penalty 2000",
            """
            POOL a b c => OK
            PROBE a REFUSED => FAIL
            PROBE a HTTP/1.1 200 OK => PASS
            DAMPED => a
            AVAILABLE => b,c
            PROBE b REFUSED => FAIL
            AVAILABLE => a,b,c PANIC
            PROBE a REFUSED => FAIL
            DAMPED => a
            DAMPED extra => ERROR DAMPED takes no arguments
            """),
        // ---- docs/design.md §2 hysteresis, rise 2 and fall 3 by default ----
        c(
            "FAIL FAIL PASS FAIL FAIL stays Up",
            "",
            """
            POOL a b => OK
            PROBE a HTTP/1.1 503 Service Unavailable => FAIL
            PROBE a TIMEOUT => FAIL
            PROBE a HTTP/1.1 200 OK => PASS
            PROBE a REFUSED => FAIL
            PROBE a HTTP/1.1 500 => FAIL
            STATUS => a UP; b UP
            HEALTHY => a,b
            """),
        c(
            "three fails in a row take Up to Down; two passes bring it back",
            "",
            """
            POOL a b => OK
            PROBE b TIMEOUT => FAIL
            PROBE b TIMEOUT => FAIL
            STATUS => a UP; b UP
            PROBE b REFUSED => FAIL
            STATUS => a UP; b DOWN
            HEALTHY => a
            PROBE b HTTP/1.1 204 No Content => PASS
            HEALTHY => a
            PROBE b HTTP/1.1 200 OK => PASS
            HEALTHY => a,b
            """),
        c(
            "after Down, PASS FAIL PASS stays Down",
            "",
            """
            POOL a => OK
            PROBE a TIMEOUT => FAIL
            PROBE a TIMEOUT => FAIL
            PROBE a TIMEOUT => FAIL
            STATUS => a DOWN
            PROBE a HTTP/1.1 200 OK => PASS
            PROBE a HTTP/1.1 503 => FAIL
            PROBE a HTTP/1.1 200 OK => PASS
            STATUS => a DOWN
            HEALTHY => none
            """),
        c(
            "a strictly alternating backend never flips, from Up or from Down",
            "",
            """
            POOL up down => OK
            PROBE down REFUSED => FAIL
            PROBE down REFUSED => FAIL
            PROBE down REFUSED => FAIL
            PROBE up HTTP/1.1 503 => FAIL
            PROBE down HTTP/1.1 200 => PASS
            PROBE up HTTP/1.1 200 => PASS
            PROBE down HTTP/1.1 503 => FAIL
            PROBE up HTTP/1.1 503 => FAIL
            PROBE down HTTP/1.1 200 => PASS
            PROBE up HTTP/1.1 200 => PASS
            PROBE down HTTP/1.1 503 => FAIL
            PROBE up HTTP/1.1 503 => FAIL
            STATUS => up UP; down DOWN
            """),
        c(
            "--rise 1 --fall 1 flip on every answer",
            "--rise 1 --fall 1",
            """
            POOL a => OK
            PROBE a TIMEOUT => FAIL
            STATUS => a DOWN
            PROBE a HTTP/1.1 200 => PASS
            STATUS => a UP
            """),
        c(
            "--fall 5 needs five fails",
            "--fall=5",
            """
            POOL a => OK
            PROBE a TIMEOUT => FAIL
            PROBE a TIMEOUT => FAIL
            PROBE a TIMEOUT => FAIL
            PROBE a TIMEOUT => FAIL
            STATUS => a UP
            PROBE a TIMEOUT => FAIL
            STATUS => a DOWN
            """),
        // ---- classification: the code from its own field, the reason phrase means nothing ----
        c(
            "misleading reason phrases and malformed lines",
            "",
            """
            POOL a => OK
            PROBE a HTTP/1.1 503 Backend 200 ms slow => FAIL
            PROBE a HTTP/1.1 200 => PASS
            PROBE a HTTP/1.1 200 Service Unavailable => PASS
            PROBE a HTTP/1.1 500 200 OK => FAIL
            PROBE a HTTP/1.0 302 Found => PASS
            PROBE a HTTP/1.1 399 => PASS
            PROBE a HTTP/1.1 400 OK => FAIL
            PROBE a HTTP/1.1 404 Not Found but 200 => FAIL
            PROBE a HTTP/1.1 2000 OK => FAIL
            PROBE a HTTP/1.1 099 Low => FAIL
            PROBE a HTTP/1.1 20 OK => FAIL
            PROBE a HTTP/2 200 => FAIL
            PROBE a http/1.1 200 OK => FAIL
            PROBE a 200 OK => FAIL
            PROBE a OK => FAIL
            PROBE a garbage => FAIL
            PROBE a  HTTP/1.1 200 OK => FAIL
            PROBE a HTTP/1.1 200OK => FAIL
            PROBE a timeout => FAIL
            """),
        c(
            "--expected-statuses narrows what passes",
            "--expected-statuses 200,204",
            """
            POOL a => OK
            PROBE a HTTP/1.1 302 Found => FAIL
            PROBE a HTTP/1.1 204 No Content => PASS
            """),
        // ---- errors change nothing ----
        c(
            "malformed commands and unknown backends answer ERROR and change nothing",
            "",
            """
            STATUS => ERROR no pool yet: start with POOL <backend>...
            POOL => ERROR POOL needs at least one backend
            POOL a a => ERROR duplicate backend a
            POOL a b => OK
            PROBE => ERROR PROBE needs a backend and an answer
            PROBE a => ERROR PROBE needs a backend and an answer
            PROBE x TIMEOUT => ERROR unknown backend x
            OUTCOME x FAIL => ERROR unknown backend x
            OUTCOME a MAYBE => ERROR OUTCOME result must be OK or FAIL, got MAYBE
            OUTCOME a FAIL remote => ERROR OUTCOME origin must be local or absent, got remote
            OUTCOME a => ERROR OUTCOME needs a backend, OK or FAIL, and optionally local
            FROB a => ERROR unknown command FROB
            STATUS now => ERROR STATUS takes no arguments
            AT soon => ERROR AT needs a time in ms, got "soon"
            AT 100 => OK
            AT 99 => ERROR the clock never goes back: it is 100, got 99
            # a comment =>
            STATUS => a UP; b UP
            """),
        // ---- passive: consecutive errors, ejection time, multiplier, decay ----
        c(
            "five errors in a row eject for the base time; errors while ejected count; the next is twice as long",
            "--max-ejection-percent 50",
            """
            POOL a b => OK
            OUTCOME a FAIL => -
            OUTCOME a FAIL => -
            OUTCOME a FAIL => -
            OUTCOME a FAIL => -
            OUTCOME a FAIL => EJECTED 30000
            AVAILABLE => b
            STATUS => a UP; b UP
            OUTCOME a FAIL => -
            AT 29999 => OK
            AVAILABLE => b
            AT 30000 => OK
            AVAILABLE => a,b
            OUTCOME a FAIL => -
            OUTCOME a FAIL => -
            OUTCOME a FAIL => -
            OUTCOME a FAIL => EJECTED 90000
            """),
        c(
            "a success resets the run",
            "--max-ejection-percent 50",
            """
            POOL a b => OK
            OUTCOME a FAIL => -
            OUTCOME a FAIL => -
            OUTCOME a FAIL => -
            OUTCOME a FAIL => -
            OUTCOME a OK => -
            OUTCOME a FAIL => -
            OUTCOME a FAIL => -
            OUTCOME a FAIL => -
            OUTCOME a FAIL => -
            AVAILABLE => a,b
            """),
        c(
            "the sweep decays the multiplier so the next ejection is short again",
            "--consecutive-errors 1 --base-ejection-ms 1000 --max-ejection-percent 50",
            """
            POOL a b => OK
            OUTCOME a FAIL => EJECTED 1000
            AT 1000 => OK
            SWEEP => OK
            OUTCOME a FAIL => EJECTED 2000
            """),
        c(
            "local-origin errors count apart from upstream errors",
            "--consecutive-errors 2 --consecutive-local-origin-errors 3 --max-ejection-percent 50",
            """
            POOL a b => OK
            OUTCOME a FAIL local => -
            OUTCOME a FAIL => -
            OUTCOME a FAIL local => -
            OUTCOME a FAIL local => EJECTED 30000
            """),
        c(
            "without --split-local-origin local errors join the upstream run",
            "--consecutive-errors 2 --split-local-origin false --max-ejection-percent 50",
            """
            POOL a b => OK
            OUTCOME a FAIL local => -
            OUTCOME a FAIL => EJECTED 30000
            """),
        c(
            "the cap refuses an ejection beyond 10 percent, and each further error again",
            "--consecutive-errors 1",
            """
            POOL a b c d e f g h i j => OK
            OUTCOME a FAIL => EJECTED 30000
            OUTCOME b FAIL => REFUSED
            OUTCOME b FAIL => REFUSED
            AVAILABLE => b,c,d,e,f,g,h,i,j
            """),
        c(
            "--always-eject-one lets one through where the percent rounds to zero",
            "--consecutive-errors 1 --always-eject-one",
            """
            POOL a b c => OK
            OUTCOME a FAIL => EJECTED 30000
            OUTCOME b FAIL => REFUSED
            """),
        c(
            "without --always-eject-one a small pool ejects nobody at 10 percent",
            "--consecutive-errors 1",
            """
            POOL a b c => OK
            OUTCOME a FAIL => REFUSED
            AVAILABLE => a,b,c
            """),
        c(
            "--uneject-on-active-pass ends the ejection at the next passing probe",
            "--consecutive-errors 1 --max-ejection-percent 50 --uneject-on-active-pass",
            """
            POOL a b => OK
            OUTCOME a FAIL => EJECTED 30000
            AVAILABLE => b
            PROBE a HTTP/1.1 200 OK => PASS
            AVAILABLE => a,b
            """),
        c(
            "a passing probe does not end an ejection by default",
            "--consecutive-errors 1 --max-ejection-percent 50",
            """
            POOL a b => OK
            OUTCOME a FAIL => EJECTED 30000
            PROBE a HTTP/1.1 200 OK => PASS
            AVAILABLE => b
            """),
        c(
            "--enforce false is a dry run",
            "--consecutive-errors 1 --enforce false",
            """
            POOL a b => OK
            OUTCOME a FAIL => WOULD_EJECT 30000
            AVAILABLE => a,b
            """),
        // ---- docs/design.md §2.2: fail-fast statuses, failures within a window ----
        c(
            "a fail-fast status takes an Up backend Down at once; Down still needs rise passes",
            "--fall 3 --rise 2 --fail-fast-statuses 500-599,429",
            """
            POOL a b => OK
            PROBE a HTTP/1.1 404 Not Found => FAIL
            STATUS => a UP; b UP
            PROBE a HTTP/1.1 503 Service Unavailable => FAIL
            STATUS => a DOWN; b UP
            PROBE a HTTP/1.1 200 OK => PASS
            PROBE a HTTP/1.1 429 Too Many Requests => FAIL
            PROBE a HTTP/1.1 200 OK => PASS
            STATUS => a DOWN; b UP
            PROBE a HTTP/1.1 200 OK => PASS
            STATUS => a UP; b UP
            """),
        c(
            "without --fail-fast-statuses a 503 waits for fall",
            "--fall 3",
            """
            POOL a => OK
            PROBE a HTTP/1.1 503 => FAIL
            STATUS => a UP
            """),
        c(
            "failures within the window eject; successes do not reset it; old ones drop out",
            "--consecutive-errors 0 --window-failures 3 --failure-window-ms 1000"
                + " --max-ejection-percent 50",
            """
            POOL a b => OK
            OUTCOME a FAIL => -
            OUTCOME a OK => -
            AT 500 => OK
            OUTCOME a FAIL => -
            AT 1000 => OK
            OUTCOME a FAIL => -
            AT 1499 => OK
            OUTCOME a FAIL => EJECTED 31499
            AVAILABLE => b
            """),
        c(
            "a refused window ejection leaves the window full",
            "--consecutive-errors 0 --window-failures 2",
            """
            POOL a b c => OK
            OUTCOME a FAIL => -
            OUTCOME a FAIL => REFUSED
            OUTCOME a FAIL => REFUSED
            """),
        // ---- panic ----
        c(
            "below half available every decided backend is published, and healing ends it",
            "--fall 1 --rise 1",
            """
            POOL a b c d => OK
            PROBE b TIMEOUT => FAIL
            AVAILABLE => a,c,d
            PROBE c TIMEOUT => FAIL
            AVAILABLE => a,d
            PROBE d REFUSED => FAIL
            AVAILABLE => a,b,c,d PANIC
            HEALTHY => a
            PROBE d HTTP/1.1 200 => PASS
            AVAILABLE => a,d
            """),
        c(
            "a panic band: enter below 50, leave only at 75",
            "--fall 1 --rise 1 --panic-exit-percent 75",
            """
            POOL a b c d => OK
            PROBE b TIMEOUT => FAIL
            PROBE c TIMEOUT => FAIL
            PROBE d TIMEOUT => FAIL
            AVAILABLE => a,b,c,d PANIC
            PROBE d HTTP/1.1 200 => PASS
            AVAILABLE => a,b,c,d PANIC
            PROBE c HTTP/1.1 200 => PASS
            AVAILABLE => a,c,d
            """),
        c(
            "--panic-threshold-percent 0 disables panic",
            "--fall 1 --panic-threshold-percent 0",
            """
            POOL a b => OK
            PROBE a TIMEOUT => FAIL
            PROBE b TIMEOUT => FAIL
            AVAILABLE => none
            """),
        c(
            "POOL starts over: everyone Up with both streaks at 0",
            "",
            """
            POOL a => OK
            PROBE a TIMEOUT => FAIL
            PROBE a TIMEOUT => FAIL
            POOL a => OK
            PROBE a TIMEOUT => FAIL
            STATUS => a UP
            """));
  }

  private static Arguments c(String name, String flags, String script) {
    return Arguments.of(name, flags, script);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void answersAsTheTableSays(String name, String flags, String script) {
    ReplaySession session =
        ReplayCommand.session(flags.isBlank() ? List.of() : Arrays.asList(flags.split(" ")));
    for (String row : script.strip().split("\n")) {
      int arrow = row.lastIndexOf(" =>");
      String input = row.substring(0, arrow);
      String expected = row.substring(arrow + 3).strip();
      List<String> want = expected.isEmpty() ? List.of() : List.of(expected.split("; "));
      assertThat(session.handle(input)).as(input).isEqualTo(want);
    }
  }

  @Test
  void runsOverStandardInputAndOutput() throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code =
        ReplayCommand.run(
            List.of("--fall", "1"),
            new BufferedReader(new StringReader("POOL a b\nPROBE a TIMEOUT\nHEALTHY\nNOPE\n")),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    assertThat(code).isZero();
    assertThat(out.toString(StandardCharsets.UTF_8))
        .isEqualTo("OK\nFAIL\nb\nERROR unknown command NOPE\n");
  }

  @Test
  void aBadFlagExitsTwoAndNamesIt() throws Exception {
    List<String> bad = new ArrayList<>();
    for (String[] args :
        new String[][] {{"--rise", "0"}, {"--nope"}, {"--fall", "x"}, {"--enforce", "maybe"}}) {
      ByteArrayOutputStream err = new ByteArrayOutputStream();
      int code =
          ReplayCommand.run(
              List.of(args),
              new BufferedReader(new StringReader("")),
              new PrintStream(new ByteArrayOutputStream()),
              new PrintStream(err, true, StandardCharsets.UTF_8));
      assertThat(code).isEqualTo(2);
      // The error stays on a 24-row screen: no usage of 30 lines after it.
      List<String> lines = err.toString(StandardCharsets.UTF_8).lines().toList();
      assertThat(lines).hasSize(2);
      assertThat(lines.get(1)).isEqualTo("run 'vigil replay --help' for the flags and commands");
      bad.add(lines.get(0));
    }
    assertThat(bad)
        .containsExactly(
            "vigil replay: active.rise: must be between 1 and 100, was 0",
            "vigil replay: unknown flag --nope",
            "vigil replay: --fall must be a number, got x",
            "vigil replay: --enforce must be true or false, got maybe");
  }

  @Test
  void failFastStatusesMustBeDisjointFromExpected() {
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> ReplayCommand.session(List.of("--fail-fast-statuses", "300-503")))
        .hasMessage("--fail-fast-statuses: 300 is also in --expected-statuses");
  }
}
