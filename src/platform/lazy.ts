/**
 * A module imported on the first call and kept: a vendor library that only some requests use costs
 * each process its start-up CPU otherwise (every test file is a process of its own).
 */
export function lazy<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => {
    loaded ??= load();
    return loaded;
  };
}
