package dev.vigil.passive;

/** The batch as a whole is refused: nothing in it is applied. */
final class BadBatch extends Exception {
  private final int status;
  private final String code;

  BadBatch(int status, String code, String message) {
    super(message, null, false, false);
    this.status = status;
    this.code = code;
  }

  int status() {
    return status;
  }

  String code() {
    return code;
  }
}
