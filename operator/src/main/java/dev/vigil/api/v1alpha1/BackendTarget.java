package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/**
 * One backend of a pool that is not a Pod (issue 35, item 1): a static IP address, or a DNS name
 * whose every A and AAAA answer is a backend. The pool's {@code spec.ports} apply to it, each with
 * its numeric {@code targetPort} (or {@code port}).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
    value = "has(self.address) != has(self.hostname)",
    message = "a target has exactly one of address and hostname")
public class BackendTarget {

  @JsonPropertyDescription(
      "An IPv4 or IPv6 address literal (no name, no port): one backend, named by this address.")
  @Size(max = 45)
  @Pattern("^[0-9a-fA-F:.]+$")
  private String address;

  @JsonPropertyDescription(
      "A DNS name resolved by the operator (A and AAAA); every answer is a backend, named <hostname>/<address>. Re-resolved on the answer's TTL, bounded to 5s..300s; a name that stops resolving keeps its last answer for 300s and the pool shows TargetsResolved=False.")
  @Size(max = 253)
  @Pattern(ApiFormats.DNS_NAME)
  private String hostname;

  @JsonPropertyDescription(
      "Zone of the target (copied to the EndpointSlice endpoint; topology hints and quorum use zones). None by default.")
  @Size(max = 63)
  private String zone;

  public BackendTarget() {}

  /** A target of one address or one hostname (the other null). */
  public static BackendTarget address(String address) {
    BackendTarget t = new BackendTarget();
    t.setAddress(address);
    return t;
  }

  public static BackendTarget hostname(String hostname) {
    BackendTarget t = new BackendTarget();
    t.setHostname(hostname);
    return t;
  }

  public String getAddress() {
    return address;
  }

  public void setAddress(String address) {
    this.address = address;
  }

  public String getHostname() {
    return hostname;
  }

  public void setHostname(String hostname) {
    this.hostname = hostname;
  }

  public String getZone() {
    return zone;
  }

  public void setZone(String zone) {
    this.zone = zone;
  }
}
