package dev.vigil.publish;

/** Counts API writes by kind, for metrics and for the "an idle pool writes nothing" checks. */
public interface WriteCounter {
  void slices(int n);

  void services(int n);

  void status(int n);

  WriteCounter NONE =
      new WriteCounter() {
        @Override
        public void slices(int n) {}

        @Override
        public void services(int n) {}

        @Override
        public void status(int n) {}
      };
}
