package dev.vigil.testing;

import io.fabric8.kubernetes.client.KubernetesClientException;

/**
 * A test's own edit of an object the operator also writes (its status): the edit carries the
 * resourceVersion it read, so a status write in between answers 409. Such an edit is made again on
 * a conflict, at most five times in all.
 */
public final class OnConflict {
  private OnConflict() {}

  public static void retry(Runnable edit) {
    for (int attempt = 1; ; attempt++) {
      try {
        edit.run();
        return;
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409 || attempt == 5) {
          throw e;
        }
      }
    }
  }
}
