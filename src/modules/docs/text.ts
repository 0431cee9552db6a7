/** Text as search sees it: whitespace collapsed, lower-cased, with a way back to the original for snippets. */

export interface Folded {
  original: string;
  lower: string;
  /** Index in `original` of each index in `lower`; null when lower-casing kept every length (nearly always). */
  offsets: Int32Array | null;
}

/** Runs of whitespace (line breaks included) become one space, so a phrase matches across lines. */
export function flatten(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** The query's form: what `fold` does to text, without the offsets. */
export function foldQuery(query: string): string {
  return flatten(query.normalize('NFC')).toLowerCase();
}

export function fold(original: string): Folded {
  const lower = original.toLowerCase();
  if (lower.length === original.length) return { original, lower, offsets: null };
  // A few characters change length when lower-cased (İ becomes i + combining dot): map positions back.
  const offsets = new Int32Array(lower.length + 1);
  let at = 0;
  let index = 0;
  for (const char of original) {
    const width = char.toLowerCase().length;
    for (let k = 0; k < width && at < lower.length; k++) offsets[at++] = index;
    index += char.length;
  }
  while (at <= lower.length) offsets[at++] = original.length;
  return { original, lower, offsets };
}

function toOriginal(folded: Folded, index: number): number {
  return folded.offsets ? folded.offsets[Math.min(index, folded.offsets.length - 1)] : index;
}

const BEFORE = 50;
const WIDTH = 150;

/** A short excerpt of the text around a match (`at`, `length` in the lower-cased form), cut at spaces. */
export function snippet(folded: Folded, at: number, length: number): string {
  const text = folded.original;
  const start = toOriginal(folded, at);
  const end = toOriginal(folded, at + length);
  let from = Math.max(0, start - BEFORE);
  let to = Math.min(text.length, Math.max(end, from + WIDTH));
  if (from > 0) {
    const space = text.indexOf(' ', from);
    if (space !== -1 && space < start) from = space + 1;
  }
  if (to < text.length) {
    const space = text.lastIndexOf(' ', to);
    if (space > end) to = space;
  }
  from = avoidSplitPair(text, from);
  to = avoidSplitPair(text, to);
  return `${from > 0 ? '…' : ''}${text.slice(from, to).trim()}${to < text.length ? '…' : ''}`;
}

/** The opening of the text, for a page that matched by title or description only. */
export function opening(folded: Folded): string {
  return snippet(folded, 0, 0);
}

/** Never cut between the two halves of a surrogate pair (an emoji, say). */
function avoidSplitPair(text: string, index: number): number {
  const code = text.charCodeAt(index);
  return index > 0 && index < text.length && code >= 0xdc00 && code <= 0xdfff ? index - 1 : index;
}

/** How often `needle` occurs in `haystack`, up to `cap` (enough to rank by). */
export function occurrences(haystack: string, needle: string, cap = 50): number {
  let count = 0;
  let at = haystack.indexOf(needle);
  while (at !== -1 && count < cap) {
    count += 1;
    at = haystack.indexOf(needle, at + needle.length);
  }
  return count;
}
