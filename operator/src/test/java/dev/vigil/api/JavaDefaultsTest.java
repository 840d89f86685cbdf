package dev.vigil.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigil.api.v1alpha1.ActiveCheck;
import dev.vigil.api.v1alpha1.BackendPoolSpec;
import dev.vigil.api.v1alpha1.FailurePercentageRule;
import dev.vigil.api.v1alpha1.GrpcCheck;
import dev.vigil.api.v1alpha1.HealthPolicySpec;
import dev.vigil.api.v1alpha1.HttpCheck;
import dev.vigil.api.v1alpha1.HttpHeader;
import dev.vigil.api.v1alpha1.HttpHeaderMatch;
import dev.vigil.api.v1alpha1.LatencyRule;
import dev.vigil.api.v1alpha1.PassiveCheck;
import dev.vigil.api.v1alpha1.PolicyRef;
import dev.vigil.api.v1alpha1.PoolPort;
import dev.vigil.api.v1alpha1.Quorum;
import dev.vigil.api.v1alpha1.ServiceRef;
import dev.vigil.api.v1alpha1.SuccessRateRule;
import dev.vigil.api.v1alpha1.TcpCheck;
import dev.vigil.api.v1alpha1.TlsConfig;
import io.fabric8.generator.annotation.Default;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A spec object built in Java (by a test, or read from the Fabric8 mock server, which applies no
 * schema defaults) holds the same defaults the API server would apply from the CRD.
 */
class JavaDefaultsTest {

  private static final List<Class<?>> SPEC_CLASSES =
      List.of(
          HealthPolicySpec.class,
          ActiveCheck.class,
          HttpCheck.class,
          HttpHeader.class,
          HttpHeaderMatch.class,
          TcpCheck.class,
          GrpcCheck.class,
          TlsConfig.class,
          dev.vigil.api.v1alpha1.ConfigMapKeyRef.class,
          PassiveCheck.class,
          SuccessRateRule.class,
          FailurePercentageRule.class,
          LatencyRule.class,
          Quorum.class,
          BackendPoolSpec.class,
          PolicyRef.class,
          PoolPort.class,
          ServiceRef.class);

  private final KubernetesSerialization serialization = new KubernetesSerialization();

  @Test
  void everyDefaultAnnotationMatchesTheFieldInitializer() throws Exception {
    for (Class<?> type : SPEC_CLASSES) {
      JsonNode fresh = tree(type.getDeclaredConstructor().newInstance());
      for (Field field : fields(type)) {
        Default annotation = schemaDefault(type, field);
        if (annotation == null) {
          continue;
        }
        JsonNode expected = serialization.unmarshal(annotation.value(), JsonNode.class);
        if (expected.isObject() && expected.isEmpty()) {
          // "{}": the API server fills the block with its own field defaults.
          expected = tree(field.getType().getDeclaredConstructor().newInstance());
        }
        assertThat(fresh.get(field.getName()))
            .as("%s.%s", type.getSimpleName(), field.getName())
            .isEqualTo(expected);
      }
    }
  }

  @Test
  void everyInitializedScalarFieldDeclaresItsDefaultInTheSchema() throws Exception {
    for (Class<?> type : SPEC_CLASSES) {
      Object fresh = type.getDeclaredConstructor().newInstance();
      for (Field field : fields(type)) {
        if (Modifier.isStatic(field.getModifiers())
            || Collection.class.isAssignableFrom(field.getType())) {
          continue;
        }
        field.setAccessible(true);
        if (field.get(fresh) != null) {
          assertThat(schemaDefault(type, field))
              .as("@Default on %s.%s", type.getSimpleName(), field.getName())
              .isNotNull();
        }
      }
    }
  }

  @Test
  void panicExitDefaultsToTheThreshold() {
    HealthPolicySpec spec = new HealthPolicySpec();
    spec.setPanicThresholdPercent(40);
    assertThat(spec.effectivePanicExitPercent()).isEqualTo(40);
    spec.setPanicExitPercent(60);
    assertThat(spec.effectivePanicExitPercent()).isEqualTo(60);
  }

  /**
   * The fields of {@code type} and of its superclasses (a shared base such as RequestVolumeRule).
   */
  private static List<Field> fields(Class<?> type) {
    List<Field> out = new ArrayList<>();
    for (Class<?> c = type; c != Object.class; c = c.getSuperclass()) {
      out.addAll(List.of(c.getDeclaredFields()));
    }
    return out;
  }

  /**
   * The schema default of a field as {@code type} declares it: on the field, or (where a shared
   * base leaves the default to each subclass) on {@code type}'s getter, which the CRD generator
   * reads as well.
   */
  private static Default schemaDefault(Class<?> type, Field field) {
    Default onField = field.getAnnotation(Default.class);
    if (onField != null || Modifier.isStatic(field.getModifiers())) {
      return onField;
    }
    String name = field.getName();
    String getter = "get" + Character.toUpperCase(name.charAt(0)) + name.substring(1);
    try {
      return type.getMethod(getter).getAnnotation(Default.class);
    } catch (NoSuchMethodException e) {
      return null;
    }
  }

  private JsonNode tree(Object value) {
    // Through text, so numbers compare by value whatever node type Jackson picked.
    return serialization.unmarshal(serialization.asJson(value), JsonNode.class);
  }
}
