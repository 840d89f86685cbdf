package dev.vigil.passive;

import static dev.vigil.passive.OtlpClients.attr;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigil.health.Origin;
import io.opentelemetry.proto.logs.v1.LogRecord;
import org.junit.jupiter.api.Test;

class OtlpProfileTest {

  @Test
  void traefikWithoutAnOriginStatusAndA502IsALocalOriginFailure() {
    // connection refused: Traefik answers 502 itself and logs no OriginStatus
    var reading = OtlpProfile.TRAEFIK.read(OtlpClients.traefik("10.0.0.1:8080", 0, 502));

    assertThat(reading)
        .isEqualTo(new OtlpProfile.Outcome("10.0.0.1", 8080, false, Origin.LOCAL, -1));
  }

  @Test
  void traefikOriginStatusDecidesAndOriginDurationIsTheLatency() {
    var ok = OtlpProfile.TRAEFIK.read(OtlpClients.traefik("10.0.0.1:8080", 404, 404));
    var failed = OtlpProfile.TRAEFIK.read(OtlpClients.traefik("10.0.0.1:8080", 503, 503));

    assertThat(ok).isEqualTo(new OtlpProfile.Outcome("10.0.0.1", 8080, true, Origin.UPSTREAM, 2));
    assertThat(failed)
        .isEqualTo(new OtlpProfile.Outcome("10.0.0.1", 8080, false, Origin.UPSTREAM, 2));
  }

  @Test
  void aClientThatWentAwayMakesNoOutcome() {
    var reading = OtlpProfile.TRAEFIK.read(OtlpClients.traefik("10.0.0.1:8080", 0, 499));

    assertThat(reading).isEqualTo(new OtlpProfile.Dropped(OtlpDrop.NO_STATUS));
  }

  @Test
  void addressesMayBeIpv6InBracketsOrAUrl() {
    assertThat(OtlpProfile.hostPort("[fd00::7]:8443")).containsExactly("fd00::7", "8443");
    assertThat(OtlpProfile.hostPort("http://10.0.0.1:80/x")).containsExactly("10.0.0.1", "80");
    assertThat(OtlpProfile.hostPort("fd00::7")).isNull();
    assertThat(OtlpProfile.hostPort("-")).isNull();
  }

  @Test
  void goDurationTextIsRead() {
    assertThat(GoDuration.nanos("1.5ms")).isEqualTo(1_500_000);
    assertThat(GoDuration.nanos("2m3s")).isEqualTo(123_000_000_000L);
    assertThat(GoDuration.nanos("150µs")).isEqualTo(150_000);
    assertThat(GoDuration.nanos("12")).isEqualTo(-1);
  }

  @Test
  void aCustomProfileReadsTheNamedAttributes() {
    OtlpProfile nginx =
        OtlpProfile.custom(
            "address=upstream_addr, status=upstream_status, duration=upstream_response_time,"
                + " durationUnit=s");
    LogRecord record =
        LogRecord.newBuilder()
            .addAttributes(attr("upstream_addr", "10.0.0.9:9000"))
            .addAttributes(attr("upstream_status", "502"))
            .addAttributes(attr("upstream_response_time", 2))
            .build();

    assertThat(nginx.read(record))
        .isEqualTo(new OtlpProfile.Outcome("10.0.0.9", 9000, false, Origin.UPSTREAM, 2_000));
  }

  @Test
  void aBadCustomProfileNamesTheField() {
    assertThatThrownBy(() -> OtlpProfile.custom("status=code"))
        .hasMessageContaining("--otlp-custom-profile")
        .hasMessageContaining("'address' is required");
    assertThatThrownBy(() -> OtlpProfile.custom("address=a,status=b,colour=c"))
        .hasMessageContaining("unknown field 'colour'");
    assertThatThrownBy(() -> OtlpProfile.custom("address=a,status=b,durationUnit=days"))
        .hasMessageContaining("durationUnit");
    assertThatThrownBy(() -> OtlpProfile.custom("address"))
        .hasMessageContaining("is not KEY=ATTRIBUTE");
  }
}
