package dev.vigil.api;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.HealthPolicy;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;

/** Where the build writes the CRDs and where the repository keeps its committed copies. */
final class GeneratedCrds {

  static final String REFRESH_COMMAND =
      "mvn -B -pl operator process-classes && cp operator/target/classes/META-INF/fabric8/*.yml"
          + " crds/";

  private GeneratedCrds() {}

  /** target/classes/META-INF/fabric8, found through the class path. */
  static Path generatedDirectory() {
    String probe = "/META-INF/fabric8/" + PrinterColumnOrder.fileName(HealthPolicy.class);
    URL url = GeneratedCrds.class.getResource(probe);
    if (url == null) {
      throw new IllegalStateException(
          probe + " is not on the class path: the build did not run the CRD generator");
    }
    try {
      return Path.of(url.toURI()).getParent();
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  /** crds/ at the repository root (the parent of the operator module). */
  static Path committedDirectory() {
    Path dir = Path.of("").toAbsolutePath();
    while (dir != null && !Files.isRegularFile(dir.resolve("operator/pom.xml"))) {
      dir = dir.getParent();
    }
    if (dir == null) {
      throw new IllegalStateException("cannot find the repository root from " + Path.of(""));
    }
    return dir.resolve("crds");
  }

  static CustomResourceDefinition load(Class<? extends HasMetadata> kind) {
    Path file = generatedDirectory().resolve(PrinterColumnOrder.fileName(kind));
    try {
      return new KubernetesSerialization()
          .unmarshal(Files.readString(file), CustomResourceDefinition.class);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static CustomResourceDefinition healthPolicy() {
    return load(HealthPolicy.class);
  }

  static CustomResourceDefinition backendPool() {
    return load(BackendPool.class);
  }

  /** The openAPIV3Schema of the only version. */
  static JSONSchemaProps schema(CustomResourceDefinition crd) {
    return crd.getSpec().getVersions().get(0).getSchema().getOpenAPIV3Schema();
  }

  /**
   * The property at a dotted path, e.g. {@code spec.active.interval}; {@code []} steps into items.
   */
  static JSONSchemaProps property(JSONSchemaProps root, String path) {
    JSONSchemaProps current = root;
    for (String step : path.split("\\.")) {
      if (step.equals("[]")) {
        current = current.getItems().getSchema();
      } else {
        JSONSchemaProps next = current.getProperties().get(step);
        if (next == null) {
          throw new AssertionError("no property '" + step + "' in " + path);
        }
        current = next;
      }
    }
    return current;
  }
}
