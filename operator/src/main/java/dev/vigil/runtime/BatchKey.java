package dev.vigil.runtime;

/**
 * A reporter's batch that ejected a backend, as its pool remembers it (docs/passive.md, "Sending a
 * batch again"): a short digest of the batch's idempotency key slot and when it ejected.
 *
 * @param digest the first {@value #DIGEST_CHARS} hex characters of the key's slot (a SHA-256 of the
 *     caller, the pool and the key)
 * @param at when the batch ejected the backend (epoch ms)
 */
public record BatchKey(String digest, long at) {
  /** 64 bits of the slot: two keys of one pool share a digest once in about 10^19 pairs. */
  public static final int DIGEST_CHARS = 16;

  /** The digest of a reporter's key slot ({@code IdempotencyKey.slot}). */
  public static String digest(String slot) {
    return slot.length() <= DIGEST_CHARS ? slot : slot.substring(0, DIGEST_CHARS);
  }
}
