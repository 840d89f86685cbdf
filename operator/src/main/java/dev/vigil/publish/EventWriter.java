package dev.vigil.publish;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.Optional;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the Events the {@link dev.vigil.publish.EventRecorder} emits, each after a {@link
 * WriteBudget.Priority#EVENT} token, so Events wait behind slices and status. A failed write is
 * logged with the Event's object, reason, the HTTP code and the API server's message (or the
 * transport's cause), and dropped: an Event is a report, never worth a retry that delays the next.
 *
 * <p>The involved object gets its UID here, from the informer's cache ({@code uids}), not from a
 * read: {@code kubectl describe} lists only Events whose involvedObject carries the UID.
 */
public final class EventWriter implements Consumer<Event> {
  private static final Logger LOG = LoggerFactory.getLogger(EventWriter.class);

  private final KubernetesClient client;
  private final WriteBudget budget;
  private final BiFunction<String, String, Optional<String>> uids;

  /**
   * @param uids an object's UID by namespace and name, from a cache (empty: the Event is written
   *     without one)
   */
  public EventWriter(
      KubernetesClient client,
      WriteBudget budget,
      BiFunction<String, String, Optional<String>> uids) {
    this.client = client;
    this.budget = budget;
    this.uids = uids;
  }

  private void withUid(Event e) {
    ObjectReference o = e.getInvolvedObject();
    if (o == null || (o.getUid() != null && !o.getUid().isEmpty())) {
      return;
    }
    uids.apply(o.getNamespace(), o.getName())
        .ifPresent(uid -> e.setInvolvedObject(new ObjectReferenceBuilder(o).withUid(uid).build()));
  }

  @Override
  public void accept(Event e) {
    try {
      withUid(e);
      budget.acquire(WriteBudget.Priority.EVENT, e.getMetadata().getNamespace());
      client.v1().events().inNamespace(e.getMetadata().getNamespace()).resource(e).create();
    } catch (InterruptedException ex) {
      Thread.currentThread().interrupt();
    } catch (KubernetesClientException ex) {
      LOG.warn(
          "could not write Event {} about {} {}/{}: {}",
          e.getReason(),
          e.getInvolvedObject().getKind(),
          e.getMetadata().getNamespace(),
          e.getInvolvedObject().getName(),
          ApiErrors.describe(ex));
    }
  }
}
