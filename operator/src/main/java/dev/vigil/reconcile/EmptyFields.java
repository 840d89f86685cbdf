package dev.vigil.reconcile;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * Sets an object's empty list and map fields to null. Fabric8's model classes allocate every one of
 * them when the object is made; a cached projection ({@link PodProjection}) would otherwise keep
 * about forty empty collections per Pod. The fields of each class are looked up once.
 */
final class EmptyFields {
  private static final ClassValue<List<Field>> COLLECTIONS =
      new ClassValue<>() {
        @Override
        protected List<Field> computeValue(Class<?> type) {
          List<Field> out = new ArrayList<>();
          for (Field f : type.getDeclaredFields()) {
            boolean collection =
                Collection.class.isAssignableFrom(f.getType())
                    || Map.class.isAssignableFrom(f.getType());
            if (collection && !Modifier.isStatic(f.getModifiers())) {
              f.setAccessible(true);
              out.add(f);
            }
          }
          return List.copyOf(out);
        }
      };

  private EmptyFields() {}

  /** {@code o}'s empty collections and maps, set to null; returns {@code o}. */
  static <T> T clear(T o) {
    for (Field f : COLLECTIONS.get(o.getClass())) {
      try {
        Object value = f.get(o);
        if (value instanceof Collection<?> c && c.isEmpty()
            || value instanceof Map<?, ?> m && m.isEmpty()) {
          f.set(o, null);
        }
      } catch (IllegalAccessException e) {
        throw new IllegalStateException("cannot clear " + f, e);
      }
    }
    return o;
  }
}
