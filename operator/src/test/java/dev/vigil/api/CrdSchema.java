package dev.vigil.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cel.bundle.Cel;
import dev.cel.bundle.CelFactory;
import dev.cel.common.types.SimpleType;
import dev.cel.extensions.CelExtensions;
import dev.cel.parser.CelStandardMacro;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.api.model.apiextensions.v1.ValidationRule;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Validates an object against a CRD's openAPIV3Schema as the API server does on create: defaults
 * first, then the structural checks the generated schemas use (type, unknown fields, required,
 * enum, pattern, minimum/maximum, lengths, item counts, int-or-string), then every {@code
 * x-kubernetes-validations} rule evaluated with CEL. Returns the problems, each with its path.
 */
final class CrdSchema {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  /** CEL as the API server evaluates {@code x-kubernetes-validations} (with its string library). */
  static final Cel CEL =
      CelFactory.standardCelBuilder()
          .setStandardMacros(CelStandardMacro.STANDARD_MACROS)
          .addVar("self", SimpleType.DYN)
          .addCompilerLibraries(CelExtensions.strings())
          .addRuntimeLibraries(CelExtensions.strings())
          .build();

  private final List<String> problems = new ArrayList<>();

  private CrdSchema() {}

  /** Problems of {@code object} (its {@code spec} only: metadata is the API server's own). */
  static List<String> validateSpec(JSONSchemaProps root, JsonNode object) {
    CrdSchema check = new CrdSchema();
    JsonNode spec = object.get("spec").deepCopy();
    JSONSchemaProps schema = root.getProperties().get("spec");
    spec = check.withDefaults(schema, spec);
    check.check(schema, spec, "spec");
    return check.problems;
  }

  private JsonNode withDefaults(JSONSchemaProps schema, JsonNode node) {
    if (node instanceof ObjectNode object && schema.getProperties() != null) {
      schema
          .getProperties()
          .forEach(
              (name, child) -> {
                if (!object.has(name) && child.getDefault() != null) {
                  object.set(name, child.getDefault().deepCopy());
                }
                if (object.has(name)) {
                  object.set(name, withDefaults(child, object.get(name)));
                }
              });
    } else if (node.isArray() && schema.getItems() != null) {
      for (int i = 0; i < node.size(); i++) {
        ((com.fasterxml.jackson.databind.node.ArrayNode) node)
            .set(i, withDefaults(schema.getItems().getSchema(), node.get(i)));
      }
    }
    return node;
  }

  private void check(JSONSchemaProps s, JsonNode n, String path) {
    if (Boolean.TRUE.equals(s.getXKubernetesIntOrString())) {
      if (!n.isIntegralNumber() && !n.isTextual()) {
        problems.add(path + ": must be an integer or a string");
      }
    } else if (s.getType() != null && !hasType(s.getType(), n)) {
      problems.add(path + ": must be " + s.getType() + ", got " + n.getNodeType());
      return;
    }
    if (s.getEnum() != null && !s.getEnum().isEmpty() && !s.getEnum().contains(n)) {
      problems.add(path + ": " + n + " is not one of " + s.getEnum());
    }
    if (n.isTextual()) {
      String v = n.asText();
      if (s.getPattern() != null && !Pattern.compile(s.getPattern()).matcher(v).find()) {
        problems.add(path + ": " + v + " does not match " + s.getPattern());
      }
      if (s.getMaxLength() != null && v.length() > s.getMaxLength()) {
        problems.add(path + ": longer than " + s.getMaxLength());
      }
      if (s.getMinLength() != null && v.length() < s.getMinLength()) {
        problems.add(path + ": shorter than " + s.getMinLength());
      }
    }
    if (n.isNumber()) {
      double v = n.asDouble();
      if (s.getMinimum() != null
          && (v < s.getMinimum()
              || (Boolean.TRUE.equals(s.getExclusiveMinimum()) && v == s.getMinimum()))) {
        problems.add(path + ": " + v + " is below the minimum " + s.getMinimum());
      }
      if (s.getMaximum() != null
          && (v > s.getMaximum()
              || (Boolean.TRUE.equals(s.getExclusiveMaximum()) && v == s.getMaximum()))) {
        problems.add(path + ": " + v + " is above the maximum " + s.getMaximum());
      }
    }
    if (n.isArray()) {
      if (s.getMinItems() != null && n.size() < s.getMinItems()) {
        problems.add(path + ": fewer than " + s.getMinItems() + " items");
      }
      if (s.getMaxItems() != null && n.size() > s.getMaxItems()) {
        problems.add(path + ": more than " + s.getMaxItems() + " items");
      }
      if (s.getItems() != null) {
        for (int i = 0; i < n.size(); i++) {
          check(s.getItems().getSchema(), n.get(i), path + "[" + i + "]");
        }
      }
    }
    if (n.isObject()) {
      checkObject(s, n, path);
    }
    if (s.getXKubernetesValidations() != null) {
      for (ValidationRule rule : s.getXKubernetesValidations()) {
        if (!eval(rule.getRule(), n, path)) {
          problems.add(path + ": " + rule.getMessage());
        }
      }
    }
  }

  private void checkObject(JSONSchemaProps s, JsonNode n, String path) {
    if (s.getRequired() != null) {
      for (String r : s.getRequired()) {
        if (!n.has(r)) {
          problems.add(path + ": " + r + " is required");
        }
      }
    }
    for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      String child = path + "." + e.getKey();
      JSONSchemaProps prop = s.getProperties() == null ? null : s.getProperties().get(e.getKey());
      if (prop != null) {
        check(prop, e.getValue(), child);
      } else if (s.getAdditionalProperties() != null
          && s.getAdditionalProperties().getSchema() != null) {
        check(s.getAdditionalProperties().getSchema(), e.getValue(), child);
      } else if (!Boolean.TRUE.equals(s.getXKubernetesPreserveUnknownFields())) {
        problems.add(child + ": unknown field (the API server would drop it)");
      }
    }
  }

  private static boolean hasType(String type, JsonNode n) {
    return switch (type) {
      case "object" -> n.isObject();
      case "array" -> n.isArray();
      case "string" -> n.isTextual();
      case "integer" -> n.isIntegralNumber();
      case "number" -> n.isNumber();
      case "boolean" -> n.isBoolean();
      default -> true;
    };
  }

  private boolean eval(String rule, JsonNode self, String path) {
    try {
      return Boolean.TRUE.equals(evaluate(rule, celValue(self)));
    } catch (Exception e) {
      problems.add(path + ": rule " + rule + " failed: " + e.getMessage());
      return true;
    }
  }

  /** {@code rule} evaluated with {@code self} bound to {@code self}. */
  static Object evaluate(String rule, Object self) throws Exception {
    return CEL.createProgram(CEL.compile(rule).getAst()).eval(Map.of("self", self));
  }

  private static Object celValue(JsonNode n) {
    if (n.isObject()) {
      Map<String, Object> m = new LinkedHashMap<>();
      n.fields().forEachRemaining(e -> m.put(e.getKey(), celValue(e.getValue())));
      return m;
    }
    if (n.isArray()) {
      List<Object> l = new ArrayList<>();
      n.forEach(x -> l.add(celValue(x)));
      return l;
    }
    if (n.isIntegralNumber()) {
      return n.asLong();
    }
    if (n.isNumber()) {
      return n.asDouble();
    }
    if (n.isBoolean()) {
      return n.asBoolean();
    }
    return n.asText();
  }

  static JsonNode toTree(Object value) {
    return MAPPER.valueToTree(value);
  }
}
