package dev.vigil.deploy;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * {@code deploy/rbac-calls.yaml}: every API call the operator makes, the single list the chart's
 * RBAC is checked against ({@code RbacCallsTest}), and the calls a real run does not make with a
 * reason each ({@code auditException}, checked by {@code LeastPrivilegeE2E}).
 */
public record RbacCalls(List<Call> calls) {

  /** Where a permission is granted. */
  public enum Scope {
    /** In the namespaces Vigil watches. */
    WATCHED,
    /** Cluster-scoped APIs. */
    CLUSTER,
    /** In the operator's own namespace. */
    RELEASE
  }

  /**
   * @param auditException null when {@code LeastPrivilegeE2E}'s run makes these calls; else why it
   *     does not (e.g. only after a conflict, only on failover) and the grant stays anyway
   */
  public record Call(
      String apiGroup,
      List<String> resources,
      List<String> verbs,
      Scope scope,
      String why,
      String auditException) {}

  /** One verb on one resource of one API group: the unit RBAC rules are compared in. */
  public record Grant(String apiGroup, String resource, String verb) implements Comparable<Grant> {
    @Override
    public int compareTo(Grant o) {
      return toString().compareTo(o.toString());
    }

    @Override
    public String toString() {
      return (apiGroup.isEmpty() ? "core" : apiGroup) + "/" + resource + ":" + verb;
    }
  }

  public static RbacCalls load(Path file) {
    ObjectMapper yaml =
        YAMLMapper.builder()
            .enable(MapperFeature.ACCEPT_CASE_INSENSITIVE_ENUMS)
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();
    try {
      return yaml.readValue(file.toFile(), RbacCalls.class);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  Set<Grant> grants(Scope scope) {
    Set<Grant> grants = new TreeSet<>();
    for (Call call : calls) {
      if (call.scope() == scope) {
        for (String resource : call.resources()) {
          for (String verb : call.verbs()) {
            grants.add(new Grant(call.apiGroup(), resource, verb));
          }
        }
      }
    }
    return grants;
  }

  /** Expands RBAC rules into grants; wildcards stay literal, so they never match a call. */
  /** The grants a real run need not use, each with its reason. */
  public java.util.Map<Grant, String> auditExceptions() {
    java.util.Map<Grant, String> out = new java.util.TreeMap<>();
    for (Call call : calls) {
      if (call.auditException() != null) {
        for (String resource : call.resources()) {
          for (String verb : call.verbs()) {
            out.put(new Grant(call.apiGroup(), resource, verb), call.auditException());
          }
        }
      }
    }
    return out;
  }

  public static Set<Grant> grantsOf(Collection<PolicyRule> rules) {
    Set<Grant> grants = new TreeSet<>();
    for (PolicyRule rule : rules) {
      for (String group : rule.getApiGroups()) {
        for (String resource : rule.getResources()) {
          for (String verb : rule.getVerbs()) {
            grants.add(new Grant(group, resource, verb));
          }
        }
      }
    }
    return grants;
  }
}
