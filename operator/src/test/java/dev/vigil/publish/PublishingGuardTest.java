package dev.vigil.publish;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PublishingGuardTest {
  private static final Service SELECTORLESS =
      new ServiceBuilder()
          .withNewMetadata()
          .withName("web")
          .endMetadata()
          .withNewSpec()
          .endSpec()
          .build();

  @Test
  void allowsASelectorlessServiceWithNoOtherWriters() {
    assertThat(PublishingGuard.check("web", SELECTORLESS, true, List.of(), false, null)).isEmpty();
    assertThat(PublishingGuard.check("web", null, true, List.of(), false, null)).isEmpty();
  }

  @Test
  void refusesAServiceWithASelector() {
    Service s =
        new ServiceBuilder(SELECTORLESS)
            .editSpec()
            .withSelector(Map.of("app", "web"))
            .endSpec()
            .build();
    assertThat(PublishingGuard.check("web", s, true, List.of(), false, null))
        .hasValueSatisfying(
            r -> {
              assertThat(r.reason()).isEqualTo("ServiceHasSelector");
              assertThat(r.message()).contains("spec.selector");
            });
  }

  @Test
  void refusesForeignSlicesAndLeftoverEndpointsNamingWhatToDelete() {
    EndpointSlice foreign =
        new EndpointSliceBuilder().withNewMetadata().withName("web-abc").endMetadata().build();
    assertThat(PublishingGuard.check("web", SELECTORLESS, true, List.of(foreign), false, null))
        .hasValueSatisfying(
            r -> {
              assertThat(r.reason()).isEqualTo("ForeignEndpointSlices");
              assertThat(r.message())
                  .startsWith("EndpointSlice web-abc also carries kubernetes.io/service-name=web")
                  .endsWith("delete it so one verdict is published");
            });
    assertThat(PublishingGuard.check("web", SELECTORLESS, true, List.of(), true, null))
        .hasValueSatisfying(
            r -> {
              assertThat(r.reason()).isEqualTo("ForeignEndpointSlices");
              assertThat(r.message())
                  .startsWith("an Endpoints object named web exists")
                  .endsWith("; delete it");
            });
  }

  @Test
  void refusesTheYoungerOfTwoPoolsNamingOneService() {
    assertThat(PublishingGuard.check("web", SELECTORLESS, true, List.of(), false, "older"))
        .hasValueSatisfying(
            r -> {
              assertThat(r.reason()).isEqualTo("ServiceConflict");
              assertThat(r.message()).contains("older");
            });
  }

  @Test
  void refusesAMissingServiceItMayNotCreate() {
    assertThat(PublishingGuard.check("web", null, false, List.of(), false, null))
        .hasValueSatisfying(
            r -> {
              assertThat(r.reason()).isEqualTo("ServiceNotFound");
              assertThat(r.message())
                  .startsWith("Service web does not exist")
                  .contains("spec.service.manage: true");
            });
  }
}
