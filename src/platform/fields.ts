/** How a change to a record is worked out, the same for every module. */

/** Equal as stored values: dates by instant, arrays element by element, anything else by identity. */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => v === b[i]);
  return a === b;
}

/** The entries of `wanted` (undefined meaning "not given") that differ from `current`; empty when none do. */
export function changedFields<T extends object>(current: T, wanted: Partial<T>): Partial<T> {
  const changes: Partial<T> = {};
  for (const [key, value] of Object.entries(wanted) as [keyof T, T[keyof T] | undefined][]) {
    if (value !== undefined && !sameValue(current[key], value)) changes[key] = value;
  }
  return changes;
}

export function hasChanges(changes: object): boolean {
  return Object.keys(changes).length > 0;
}

/** Tags trimmed, without empties or repeats, in the order given. */
export function uniqueTags(tags: string[]): string[] {
  return [...new Set(tags.map((tag) => tag.trim()).filter(Boolean))];
}
