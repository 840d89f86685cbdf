package dev.vigil.security;

import java.util.List;
import java.util.Map;

/**
 * A caller as a TokenReview authenticated it: what a SubjectAccessReview needs to decide for it.
 */
public record Identity(
    String username, String uid, List<String> groups, Map<String, List<String>> extra) {

  public Identity {
    groups = groups == null ? List.of() : List.copyOf(groups);
    extra = extra == null ? Map.of() : Map.copyOf(extra);
  }

  /** What authorization depends on: the same key means the same SubjectAccessReview answer. */
  String authorizationKey() {
    return username + '\u0000' + uid + '\u0000' + groups + '\u0000' + extra;
  }
}
