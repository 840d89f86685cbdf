package dev.vigil.shard;

import dev.vigil.publish.WriteBudget;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaderElectionRecord;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.Lock;

/**
 * The leader Lease's lock for Fabric8's {@code LeaderElector} (the sharder's election), whose
 * writes take a {@link WriteBudget.Priority#LEASE} token first: the elector's creates, renewals and
 * its release on cancel are counted in the one budget, and never wait for it. Reads pass through.
 */
final class BudgetedLeaseLock implements Lock {
  private final Lock lock;
  private final WriteBudget budget;

  BudgetedLeaseLock(Lock lock, WriteBudget budget) {
    this.lock = lock;
    this.budget = budget;
  }

  @Override
  public LeaderElectionRecord get(KubernetesClient client) {
    return lock.get(client);
  }

  @Override
  public void create(KubernetesClient client, LeaderElectionRecord record) {
    budget.leaseWrite();
    lock.create(client, record);
  }

  @Override
  public void update(KubernetesClient client, LeaderElectionRecord record) {
    budget.leaseWrite();
    lock.update(client, record);
  }

  @Override
  public String identity() {
    return lock.identity();
  }

  @Override
  public String describe() {
    return lock.describe();
  }
}
