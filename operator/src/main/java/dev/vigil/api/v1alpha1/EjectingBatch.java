package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/**
 * A reporter's batch, sent under an Idempotency-Key, that ejected a backend (docs/passive.md,
 * "Sending a batch again"): the next owner of the pool restores it with the ejection and does not
 * apply that batch again.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class EjectingBatch {

  @JsonPropertyDescription(
      "The first 16 hex characters of the SHA-256 of the reporter's user name, the pool and its Idempotency-Key (not the key itself).")
  private String key;

  @JsonPropertyDescription("When the batch ejected the backend (RFC 3339, milliseconds).")
  private String at;

  public String getKey() {
    return key;
  }

  public void setKey(String key) {
    this.key = key;
  }

  public String getAt() {
    return at;
  }

  public void setAt(String at) {
    this.at = at;
  }
}
