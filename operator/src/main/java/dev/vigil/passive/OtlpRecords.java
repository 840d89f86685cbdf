package dev.vigil.passive;

import dev.vigil.runtime.OutcomeReport;
import dev.vigil.runtime.PoolKey;
import io.opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest;
import io.opentelemetry.proto.logs.v1.LogRecord;
import io.opentelemetry.proto.logs.v1.ResourceLogs;
import io.opentelemetry.proto.logs.v1.ScopeLogs;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One OTLP export's records as outcomes grouped by pool: each record is read by a profile (the one
 * the caller named, or the first of {@link #profiles} whose address attribute it carries), and its
 * address looked up in the {@link BackendAddresses} of all pools. Records that make no outcome are
 * counted by {@link OtlpDrop} reason. Pure apart from reading the index.
 */
final class OtlpRecords {
  /** The outcomes per pool, in record order, and what was dropped. */
  record Grouped(
      int records, Map<PoolKey, List<OutcomeReport>> pools, Map<OtlpDrop, Integer> drops) {
    int dropped() {
      int n = 0;
      for (int c : drops.values()) {
        n += c;
      }
      return n;
    }
  }

  private final BackendAddresses addresses;
  private final List<OtlpProfile> profiles;

  /**
   * @param profiles tried in order for records of callers that name none
   */
  OtlpRecords(BackendAddresses addresses, List<OtlpProfile> profiles) {
    this.addresses = addresses;
    this.profiles = List.copyOf(profiles);
  }

  /** The profile called {@code name}, or null. */
  OtlpProfile profile(String name) {
    for (OtlpProfile p : profiles) {
      if (p.name().equals(name)) {
        return p;
      }
    }
    return null;
  }

  /** Names of the profiles (for error messages). */
  List<String> names() {
    return profiles.stream().map(OtlpProfile::name).toList();
  }

  /**
   * @param chosen the profile the caller named, or null to choose per record
   */
  Grouped group(ExportLogsServiceRequest request, OtlpProfile chosen) {
    Map<PoolKey, List<OutcomeReport>> pools = new LinkedHashMap<>();
    Map<OtlpDrop, Integer> drops = new EnumMap<>(OtlpDrop.class);
    int records = 0;
    for (ResourceLogs rl : request.getResourceLogsList()) {
      for (ScopeLogs sl : rl.getScopeLogsList()) {
        for (LogRecord record : sl.getLogRecordsList()) {
          records++;
          OtlpDrop drop = place(record, chosen, pools);
          if (drop != null) {
            drops.merge(drop, 1, Integer::sum);
          }
        }
      }
    }
    return new Grouped(records, pools, drops);
  }

  private OtlpDrop place(
      LogRecord record, OtlpProfile chosen, Map<PoolKey, List<OutcomeReport>> pools) {
    OtlpProfile profile = chosen != null ? chosen : choose(record);
    if (profile == null) {
      return OtlpDrop.NO_ADDRESS;
    }
    OtlpProfile.Reading reading = profile.read(record);
    if (reading instanceof OtlpProfile.Dropped d) {
      return d.reason();
    }
    OtlpProfile.Outcome o = (OtlpProfile.Outcome) reading;
    List<PoolKey> owners = addresses.pools(o.ip(), o.port());
    if (owners.isEmpty()) {
      return OtlpDrop.NOT_A_BACKEND;
    }
    OutcomeReport report = new OutcomeReport(o.ip(), o.ok(), o.origin(), o.latencyMs());
    for (PoolKey pool : owners) {
      pools.computeIfAbsent(pool, k -> new ArrayList<>()).add(report);
    }
    return null;
  }

  private OtlpProfile choose(LogRecord record) {
    for (OtlpProfile p : profiles) {
      if (p.claims(record)) {
        return p;
      }
    }
    return null;
  }
}
