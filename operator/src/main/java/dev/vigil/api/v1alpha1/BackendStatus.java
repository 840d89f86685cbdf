package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** The state of one backend of a pool. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class BackendStatus {

  @JsonPropertyDescription("Name of the Pod.")
  private String pod;

  @JsonPropertyDescription("IP address of the Pod.")
  private String address;

  @JsonPropertyDescription("Unknown (not probed yet), Up, Down, Ejected or Draining.")
  private BackendState state;

  @JsonPropertyDescription("Whether the backend may take traffic (Up, not ejected, not draining).")
  private Boolean available;

  @JsonPropertyDescription("When the backend entered its current state (RFC 3339).")
  private String since;

  @JsonPropertyDescription(
      "How many times the backend has been ejected; an ejection lasts baseEjectionTime times this, capped.")
  private Integer ejections;

  @JsonPropertyDescription("End of the current ejection (RFC 3339), if ejected.")
  private String ejectedUntil;

  @JsonPropertyDescription("The latest active probe.")
  private LastProbe lastProbe;

  @JsonPropertyDescription(
      "Why the backend is in its state, or what a dry-run rule would have done, e.g. 'would eject: success rate 0.42 below 0.81'.")
  private String reason;

  public String getPod() {
    return pod;
  }

  public void setPod(String pod) {
    this.pod = pod;
  }

  public String getAddress() {
    return address;
  }

  public void setAddress(String address) {
    this.address = address;
  }

  public BackendState getState() {
    return state;
  }

  public void setState(BackendState state) {
    this.state = state;
  }

  public Boolean getAvailable() {
    return available;
  }

  public void setAvailable(Boolean available) {
    this.available = available;
  }

  public String getSince() {
    return since;
  }

  public void setSince(String since) {
    this.since = since;
  }

  public Integer getEjections() {
    return ejections;
  }

  public void setEjections(Integer ejections) {
    this.ejections = ejections;
  }

  public String getEjectedUntil() {
    return ejectedUntil;
  }

  public void setEjectedUntil(String ejectedUntil) {
    this.ejectedUntil = ejectedUntil;
  }

  public LastProbe getLastProbe() {
    return lastProbe;
  }

  public void setLastProbe(LastProbe lastProbe) {
    this.lastProbe = lastProbe;
  }

  public String getReason() {
    return reason;
  }

  public void setReason(String reason) {
    this.reason = reason;
  }
}
