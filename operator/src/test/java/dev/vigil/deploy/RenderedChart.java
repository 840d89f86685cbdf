package dev.vigil.deploy;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/** The objects {@code helm template} produced, parsed with Fabric8 (unknown kinds stay generic). */
record RenderedChart(List<HasMetadata> objects) {
  private static final Pattern DOCUMENT_SEPARATOR = Pattern.compile("(?m)^---\\s*$");
  private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

  static RenderedChart parse(String yaml) {
    List<HasMetadata> objects =
        DOCUMENT_SEPARATOR
            .splitAsStream(yaml)
            .filter(RenderedChart::hasContent)
            .map(doc -> (HasMetadata) SERIALIZATION.unmarshal(doc))
            .toList();
    return new RenderedChart(objects);
  }

  <T extends HasMetadata> List<T> all(Class<T> type) {
    return objects.stream().filter(type::isInstance).map(type::cast).toList();
  }

  List<HasMetadata> ofKind(String kind) {
    return objects.stream().filter(o -> kind.equals(o.getKind())).toList();
  }

  <T extends HasMetadata> T one(Class<T> type) {
    List<T> found = all(type);
    if (found.size() != 1) {
      throw new AssertionError("expected one " + type.getSimpleName() + ", found " + found.size());
    }
    return found.get(0);
  }

  <T extends HasMetadata> Optional<T> named(Class<T> type, String name) {
    return all(type).stream().filter(o -> name.equals(o.getMetadata().getName())).findFirst();
  }

  <T extends HasMetadata> T require(Class<T> type, String name) {
    return named(type, name)
        .orElseThrow(() -> new AssertionError("no " + type.getSimpleName() + " named " + name));
  }

  /**
   * Fields of typed objects that the Kubernetes model does not know (a misspelt or misplaced key),
   * as paths such as {@code Deployment/vigil.spec.template.spec: [readinesProbe]}. Fabric8 keeps
   * such keys in {@code additionalProperties} instead of failing.
   */
  List<String> unknownFields() {
    List<String> found = new ArrayList<>();
    for (HasMetadata object : objects) {
      if (!(object instanceof GenericKubernetesResource)) {
        collectUnknown(object, object.getKind() + "/" + object.getMetadata().getName(), found);
      }
    }
    return found;
  }

  private static void collectUnknown(Object node, String path, List<String> found) {
    if (node instanceof List<?> list) {
      for (int i = 0; i < list.size(); i++) {
        collectUnknown(list.get(i), path + "[" + i + "]", found);
      }
    } else if (node instanceof Map<?, ?> map) {
      map.forEach((key, value) -> collectUnknown(value, path + "." + key, found));
    } else if (node != null && isModel(node.getClass())) {
      for (Method getter : node.getClass().getMethods()) {
        if (getter.getParameterCount() != 0 || !getter.getName().startsWith("get")) {
          continue;
        }
        Object value = invoke(getter, node);
        if (getter.getName().equals("getAdditionalProperties")) {
          if (value instanceof Map<?, ?> extra && !extra.isEmpty()) {
            found.add(path + ": " + extra.keySet());
          }
        } else if (List.class.isAssignableFrom(getter.getReturnType())
            || Map.class.isAssignableFrom(getter.getReturnType())
            || isModel(getter.getReturnType())) {
          collectUnknown(value, path + "." + propertyName(getter), found);
        }
      }
    }
  }

  private static boolean isModel(Class<?> type) {
    return type.getName().startsWith("io.fabric8.kubernetes.api.model.");
  }

  private static Object invoke(Method getter, Object target) {
    try {
      return getter.invoke(target);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(getter + " on " + target.getClass(), e);
    }
  }

  private static String propertyName(Method getter) {
    String name = getter.getName().substring(3);
    return Character.toLowerCase(name.charAt(0)) + name.substring(1);
  }

  private static boolean hasContent(String doc) {
    return doc.lines().map(String::strip).anyMatch(l -> !l.isEmpty() && !l.startsWith("#"));
  }
}
