/** `text` with `%`, `_` and `\` escaped, so that a LIKE/ILIKE pattern built from it matches it literally. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`);
}

/** A LIKE/ILIKE pattern matching `text` anywhere, with `%`, `_` and `\` in it taken literally. */
export function containsPattern(text: string): string {
  return `%${escapeLike(text)}%`;
}
