package dev.vigil.passive;

/**
 * One rejected outcome of a batch.
 *
 * @param index the item's position in the batch, from 0 (for NDJSON: the n-th non-blank line)
 */
public record Rejection(int index, RejectReason reason, String message) {}
