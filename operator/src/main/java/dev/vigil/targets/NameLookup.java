package dev.vigil.targets;

import java.util.concurrent.CompletionStage;

/** Resolves one DNS name; the seam between {@link TargetResolver} and the network. */
public interface NameLookup extends AutoCloseable {
  /** Completes (never exceptionally) with the name's addresses or why it failed. */
  CompletionStage<DnsAnswer> lookup(String hostname);

  @Override
  void close();
}
