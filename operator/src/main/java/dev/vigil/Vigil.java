package dev.vigil;

/** Vigil's entry point. */
public final class Vigil {
  private Vigil() {}

  public static void main(String[] args) {
    System.out.println("vigil: the operator and demo arrive with later issues");
  }
}
