package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;

/**
 * What every statistical outlier rule of {@code passive} has: its own dry-run switch. The CRD
 * generator reads this field into each subclass's schema.
 */
public abstract class OutlierRule {

  @JsonPropertyDescription(
      "false makes this rule a dry run: would-be ejections are reported, nobody is ejected.")
  @Default("true")
  private Boolean enforce = true;

  public Boolean getEnforce() {
    return enforce;
  }

  public void setEnforce(Boolean enforce) {
    this.enforce = enforce;
  }
}
