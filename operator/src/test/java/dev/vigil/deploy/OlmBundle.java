package dev.vigil.deploy;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * {@code deploy/olm}: Vigil's OLM bundle (registry+v1). The ClusterServiceVersion is written by
 * hand except the parts that come from the chart and the examples, which this class generates: the
 * install strategy (the chart's Deployment, its ClusterRoles and Role as permissions), the
 * container image and {@code alm-examples}. The CRDs are copies of {@code crds/}; the Service and
 * the ClusterRoles the chart offers to scrapers and reporters are rendered from the chart.
 */
final class OlmBundle {
  static final String DIR = "deploy/olm";
  static final String CSV = DIR + "/manifests/vigil.clusterserviceversion.yaml";
  static final String REGENERATE =
      "mvn -B -pl operator test -Dtest=OlmBundleTest -Dvigil.deploy.regenerate=true";

  /**
   * The chart's values for OLM: the certificate from a Secret the user creates, as the plain
   * manifest.
   */
  static final String VALUES = PlainManifest.VALUES;

  /** Watched namespaces bound one by one: how the chart's RBAC is split by scope. */
  private static final String SCOPED = "watchNamespaces: [olm-target]\n";

  /** OLM projects the OperatorGroup's target namespaces into this annotation of the Pod. */
  static final String TARGET_NAMESPACES = "metadata.annotations['olm.targetNamespaces']";

  private static final String CSV_HEADER =
      """
      # Vigil's ClusterServiceVersion. Written by hand except spec.install, the containerImage and
      # alm-examples annotations, which OlmBundleTest generates from the Helm chart (default values,
      # outcomes.tls.mode=secret) and examples/, and fails on when they differ. Regenerate:
      #   %s
      """;

  private static final Pattern DOCUMENT_SEPARATOR = Pattern.compile("(?m)^---\\s*$");
  private static final ObjectMapper YAML =
      new ObjectMapper(
              YAMLFactory.builder()
                  .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
                  .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES)
                  .enable(YAMLGenerator.Feature.LITERAL_BLOCK_STYLE)
                  .enable(YAMLGenerator.Feature.ALWAYS_QUOTE_NUMBERS_AS_STRINGS)
                  .enable(YAMLGenerator.Feature.INDENT_ARRAYS_WITH_INDICATOR)
                  .build())
          .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final VigilChart chart;
  private final List<ObjectNode> rendered;
  private final List<ObjectNode> scoped;

  OlmBundle(VigilChart chart) {
    this.chart = chart;
    this.rendered = documents(chart.template(VALUES));
    this.scoped = documents(chart.template(VALUES + SCOPED));
  }

  /** The CSV: {@code committed} (its hand-written parts) with the generated parts filled in. */
  String csv(String committed) {
    ObjectNode csv = (ObjectNode) read(committed);
    ObjectNode deployment = find("Deployment", "vigil");
    ObjectNode annotations =
        (ObjectNode) csv.withObjectProperty("metadata").withObjectProperty("annotations");
    annotations.put("alm-examples", almExamples());
    annotations.put(
        "containerImage", deployment.at("/spec/template/spec/containers/0/image").asText());

    ObjectNode install = JsonNodeFactory.instance.objectNode();
    String serviceAccount = deployment.at("/spec/template/spec/serviceAccountName").asText();
    install
        .withArrayProperty("clusterPermissions")
        .add(permission(serviceAccount, boundRules("ClusterRoleBinding", serviceAccount)));
    install
        .withArrayProperty("permissions")
        .add(permission(serviceAccount, boundRules("RoleBinding", serviceAccount)));
    ObjectNode entry = install.withArrayProperty("deployments").addObject();
    entry.put("name", deployment.at("/metadata/name").asText());
    entry.set("label", withoutHelmLabels((ObjectNode) deployment.at("/metadata/labels")));
    entry.set("spec", olmDeploymentSpec((ObjectNode) deployment.get("spec").deepCopy()));
    ((ObjectNode) csv.get("spec")).withObjectProperty("install").set("spec", install);
    return CSV_HEADER.formatted(REGENERATE) + write(csv);
  }

  /**
   * The objects besides the CSV and CRDs that OLM installs from {@code manifests/}, by file name:
   * the chart's Service and its metrics-reader and outcome-reporter ClusterRoles.
   */
  Map<String, String> otherManifests() {
    Map<String, String> files = new LinkedHashMap<>();
    files.put("vigil_v1_service.yaml", manifest(find("Service", "vigil")));
    for (String role : List.of("vigil-metrics-reader", "vigil-outcome-reporter")) {
      files.put(
          role + "_rbac.authorization.k8s.io_v1_clusterrole.yaml",
          manifest(find("ClusterRole", role)));
    }
    return files;
  }

  /** The bundle's CRD files and the {@code crds/} file each must equal. */
  Map<Path, Path> crdCopies() {
    Map<Path, Path> copies = new LinkedHashMap<>();
    try (Stream<Path> files = Files.list(chart.repoRoot().resolve("crds"))) {
      for (Path crd : files.filter(f -> f.toString().endsWith(".yml")).sorted().toList()) {
        copies.put(chart.repoRoot().resolve(DIR + "/manifests").resolve(crd.getFileName()), crd);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return copies;
  }

  /** Every vigil.dev object of {@code examples/}, without its namespace, as a JSON array. */
  String almExamples() {
    ArrayNode examples = JsonNodeFactory.instance.arrayNode();
    List<Path> files = new ArrayList<>();
    try (Stream<Path> list = Files.list(chart.repoRoot().resolve("examples"))) {
      list.filter(f -> f.toString().endsWith(".yaml")).sorted().forEach(files::add);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    // The web example first: OLM offers the first example of each kind as the template.
    files.sort((a, b) -> a.endsWith("web.yaml") ? -1 : b.endsWith("web.yaml") ? 1 : 0);
    for (Path file : files) {
      try {
        for (ObjectNode object : documents(Files.readString(file))) {
          if (object.path("apiVersion").asText().startsWith("vigil.dev/")) {
            ((ObjectNode) object.get("metadata")).remove("namespace");
            examples.add(object);
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    try {
      return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(examples);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * The chart's Deployment spec with the watched namespaces taken from the OperatorGroup: OLM sets
   * {@code olm.targetNamespaces} on the Pod (comma-separated, empty for all namespaces), the same
   * form as {@code VIGIL_NAMESPACES}.
   */
  private static ObjectNode olmDeploymentSpec(ObjectNode spec) {
    for (JsonNode env : spec.at("/template/spec/containers/0/env")) {
      if ("VIGIL_NAMESPACES".equals(env.path("name").asText())) {
        ObjectNode var = (ObjectNode) env;
        var.remove("value");
        var.withObjectProperty("valueFrom")
            .withObjectProperty("fieldRef")
            .put("fieldPath", TARGET_NAMESPACES);
        return spec;
      }
    }
    throw new AssertionError("the chart's Deployment sets no VIGIL_NAMESPACES");
  }

  /**
   * The rules of every role the chart binds to the operator's ServiceAccount with bindings of
   * {@code kind}, rendered with watchNamespaces set: then a ClusterRoleBinding grants only what is
   * cluster-scoped, and RoleBindings grant what the operator needs in the namespaces it watches and
   * the Lease in its own, which is what OLM's clusterPermissions and permissions mean. A role bound
   * twice (once per watched namespace) counts once.
   */
  private ArrayNode boundRules(String kind, String serviceAccount) {
    ArrayNode rules = JsonNodeFactory.instance.arrayNode();
    Set<String> roles = new LinkedHashSet<>();
    for (ObjectNode binding : scoped) {
      boolean toOperator = false;
      for (JsonNode subject : binding.path("subjects")) {
        toOperator |=
            "ServiceAccount".equals(subject.path("kind").asText())
                && serviceAccount.equals(subject.path("name").asText());
      }
      if (kind.equals(binding.path("kind").asText()) && toOperator) {
        String roleKind = binding.at("/roleRef/kind").asText();
        String roleName = binding.at("/roleRef/name").asText();
        if (roles.add(roleKind + "/" + roleName)) {
          rules.addAll(rules(find(scoped, roleKind, roleName)));
        }
      }
    }
    if (rules.isEmpty()) {
      throw new AssertionError("the chart binds no role to " + serviceAccount + " with a " + kind);
    }
    return rules;
  }

  private static ObjectNode permission(String serviceAccount, ArrayNode rules) {
    ObjectNode permission = JsonNodeFactory.instance.objectNode();
    permission.put("serviceAccountName", serviceAccount);
    permission.set("rules", rules);
    return permission;
  }

  private static ArrayNode rules(ObjectNode role) {
    return ((ArrayNode) role.get("rules")).deepCopy();
  }

  private static ObjectNode withoutHelmLabels(ObjectNode labels) {
    ObjectNode copy = labels.deepCopy();
    copy.remove("helm.sh/chart");
    copy.remove("app.kubernetes.io/managed-by");
    return copy;
  }

  private String manifest(ObjectNode object) {
    ObjectNode copy = object.deepCopy();
    ObjectNode metadata = (ObjectNode) copy.get("metadata");
    metadata.remove("namespace");
    metadata.set("labels", withoutHelmLabels((ObjectNode) metadata.get("labels")));
    return "# Rendered from the Helm chart by OlmBundleTest; regenerate: "
        + REGENERATE
        + "\n"
        + write(copy);
  }

  private ObjectNode find(String kind, String name) {
    return find(rendered, kind, name);
  }

  private static ObjectNode find(List<ObjectNode> objects, String kind, String name) {
    return objects.stream()
        .filter(o -> kind.equals(o.path("kind").asText()))
        .filter(o -> name.equals(o.at("/metadata/name").asText()))
        .findFirst()
        .orElseThrow(() -> new AssertionError("the chart renders no " + kind + " " + name));
  }

  static List<ObjectNode> documents(String yaml) {
    return DOCUMENT_SEPARATOR
        .splitAsStream(yaml)
        .map(OlmBundle::read)
        .filter(n -> n instanceof ObjectNode)
        .map(n -> (ObjectNode) n)
        .toList();
  }

  static JsonNode read(String yaml) {
    try {
      return YAML.readTree(yaml);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException(e);
    }
  }

  static String write(JsonNode node) {
    try {
      return YAML.writeValueAsString(node);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}
