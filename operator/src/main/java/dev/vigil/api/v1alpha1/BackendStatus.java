package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.List;

/** The state of one backend of a pool. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class BackendStatus {

  @JsonPropertyDescription("Name of the Pod; for spec.targets, the address or hostname/address.")
  private String pod;

  @JsonPropertyDescription("IP address of the Pod or target.")
  private String address;

  @JsonPropertyDescription(
      "Unknown (not probed yet), Up, Down, Ejected, Damped, Draining or Maint. Maint first, then Draining, then Down > Ejected > Damped > Up.")
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

  @JsonPropertyDescription(
      "Batches sent under an Idempotency-Key that ejected this backend in the last 2 minutes (at most 4, oldest first): a pool's next owner restores them with the ejection and answers a reporter's retry of one of them without applying it again.")
  private List<EjectingBatch> ejectedBy;

  @JsonPropertyDescription(
      "Flap-damping merit as last set at meritTime (before decay); its value t later is merit x 2^(-t / halfLife). Absent when never penalized.")
  private Double merit;

  @JsonPropertyDescription("When merit was set (RFC 3339, milliseconds).")
  private String meritTime;

  @JsonPropertyDescription(
      "While damped: when the backend is released, the first moment its decayed merit is at or below damping.reuseThreshold (RFC 3339).")
  private String dampedUntil;

  @JsonPropertyDescription("The latest active probe.")
  private LastProbe lastProbe;

  @JsonPropertyDescription(
      "Why the backend is in its state, or what a dry-run rule would have done, e.g. 'would eject: success rate 0.42 below 0.81', 'drain by admin', 'maint by agent: overloaded', 'down by agent: disk full'.")
  private String reason;

  @JsonPropertyDescription(
      "Zones of the checkers that confirmed the backend's last Down verdict put to the vote (they probed it Down too; docs/design.md §8). With refutedBy and abstained, absent when no Down verdict of the backend ever went to the voters.")
  private List<String> confirmedBy;

  @JsonPropertyDescription(
      "Zones of the checkers that refuted the backend's last Down verdict put to the vote (they probed it Up).")
  private List<String> refutedBy;

  @JsonPropertyDescription(
      "Zones of the checkers asked about the backend's last Down verdict that did not answer in time (neither Up nor Down).")
  private List<String> abstained;

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

  public List<EjectingBatch> getEjectedBy() {
    return ejectedBy;
  }

  public void setEjectedBy(List<EjectingBatch> ejectedBy) {
    this.ejectedBy = ejectedBy;
  }

  public Double getMerit() {
    return merit;
  }

  public void setMerit(Double merit) {
    this.merit = merit;
  }

  public String getMeritTime() {
    return meritTime;
  }

  public void setMeritTime(String meritTime) {
    this.meritTime = meritTime;
  }

  public String getDampedUntil() {
    return dampedUntil;
  }

  public void setDampedUntil(String dampedUntil) {
    this.dampedUntil = dampedUntil;
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

  public List<String> getConfirmedBy() {
    return confirmedBy;
  }

  public void setConfirmedBy(List<String> confirmedBy) {
    this.confirmedBy = confirmedBy;
  }

  public List<String> getRefutedBy() {
    return refutedBy;
  }

  public void setRefutedBy(List<String> refutedBy) {
    this.refutedBy = refutedBy;
  }

  public List<String> getAbstained() {
    return abstained;
  }

  public void setAbstained(List<String> abstained) {
    this.abstained = abstained;
  }
}
