package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.ValidationRule;

/** How Vigil checks the backends of every BackendPool that refers to this policy. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
    value = "!has(self.panicExitPercent) || self.panicExitPercent >= self.panicThresholdPercent",
    message = "panicExitPercent must be at least panicThresholdPercent",
    fieldPath = ".panicExitPercent")
public class HealthPolicySpec {

  @JsonPropertyDescription(
      "Active checks: Vigil probes every backend on a jittered timer and decides Up or Down with rise/fall hysteresis.")
  @Default("{}")
  private ActiveCheck active = new ActiveCheck();

  @JsonPropertyDescription(
      "Passive checks: outcomes of real requests, reported by proxies or sidecars, eject misbehaving backends for a while.")
  @Default("{}")
  private PassiveCheck passive = new PassiveCheck();

  @JsonPropertyDescription(
      "Flap damping (after BGP route-flap damping, RFC 2439): holds back a backend that keeps going Down and Up, which hysteresis alone does not stop. Off unless this block is present; an empty block takes every default.")
  private Damping damping;

  @JsonPropertyDescription(
      "Checker quorum across zones: the owner of a pool asks checkers in other zones to confirm each active Down before it publishes it (Ups and passive ejections are never confirmed). Off unless this block is present; an empty block takes every default. The replicas' confirmation exchange is being built (issue 32): until it ships the block is validated and resolved but every owner still decides alone.")
  private Quorum quorum;

  @JsonPropertyDescription(
      "Panic threshold in percent. When fewer than this share of the decided backends (neither Unknown nor draining) is available, Vigil ignores health and publishes every decided backend as ready. 0 disables panic.")
  @Default("50")
  @Min(0)
  @Max(100)
  private Integer panicThresholdPercent = 50;

  @JsonPropertyDescription(
      "Leave panic only when at least this share of the decided backends is available, a band against flapping in and out of panic. Defaults to panicThresholdPercent (no band); must be between panicThresholdPercent and 100.")
  @Min(0)
  @Max(100)
  private Integer panicExitPercent;

  public ActiveCheck getActive() {
    return active;
  }

  public void setActive(ActiveCheck active) {
    this.active = active;
  }

  public PassiveCheck getPassive() {
    return passive;
  }

  public void setPassive(PassiveCheck passive) {
    this.passive = passive;
  }

  public Damping getDamping() {
    return damping;
  }

  public void setDamping(Damping damping) {
    this.damping = damping;
  }

  public Quorum getQuorum() {
    return quorum;
  }

  public void setQuorum(Quorum quorum) {
    this.quorum = quorum;
  }

  public Integer getPanicThresholdPercent() {
    return panicThresholdPercent;
  }

  public void setPanicThresholdPercent(Integer panicThresholdPercent) {
    this.panicThresholdPercent = panicThresholdPercent;
  }

  public Integer getPanicExitPercent() {
    return panicExitPercent;
  }

  public void setPanicExitPercent(Integer panicExitPercent) {
    this.panicExitPercent = panicExitPercent;
  }

  /** The exit threshold in effect: {@link #getPanicExitPercent()} or else the entry threshold. */
  public int effectivePanicExitPercent() {
    return panicExitPercent != null ? panicExitPercent : panicThresholdPercent;
  }
}
