/**
 * Splits a document's text into overlapping chunks of about `size` characters for full-text search.
 * A chunk ends at the last paragraph break in its second half, else the last sentence or line end,
 * else the last space, and only then mid-word; never inside a surrogate pair. The next chunk starts
 * `overlap` characters earlier, at a word start, so a phrase across a boundary is found in one chunk.
 * The same text always gives the same chunks, numbered from 0.
 */

export interface DocumentChunk {
  chunk_index: number;
  content: string;
}

export interface ChunkOptions {
  size?: number;
  overlap?: number;
}

export const CHUNK_SIZE = 1000;
export const CHUNK_OVERLAP = 150;

export function chunkText(text: string, options: ChunkOptions = {}): DocumentChunk[] {
  const size = Math.max(8, options.size ?? CHUNK_SIZE);
  const overlap = Math.min(options.overlap ?? CHUNK_OVERLAP, Math.floor(size / 4));
  const chunks: DocumentChunk[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + size, text.length);
    if (end < text.length) end = pairSafe(text, breakPoint(text, start + Math.ceil(size / 2), end));
    const content = text.slice(start, end).trim();
    if (content) chunks.push({ chunk_index: chunks.length, content });
    if (end >= text.length) break;
    // Past the first half of the chunk by construction, so always ahead of `start`.
    start = pairSafe(text, wordStart(text, end - overlap, end));
  }
  return chunks;
}

/** Where to end a chunk within [from, to): the best boundary, as an index just past it. */
function breakPoint(text: string, from: number, to: number): number {
  const window = text.slice(from, to);
  const paragraph = window.lastIndexOf('\n\n');
  if (paragraph >= 0) return from + paragraph + 2;
  let space = -1;
  for (let i = window.length - 1; i >= 0; i--) {
    const char = window.charCodeAt(i);
    if (char === NEWLINE) return from + i + 1;
    if (isSentenceEnd(char) && (i + 1 === window.length || isSpace(window.charCodeAt(i + 1))))
      return from + i + 1;
    if (space < 0 && isSpace(char)) space = i;
  }
  return space >= 0 ? from + space + 1 : to;
}

/** The first word start at or after `from` (before `limit`), so an overlap does not begin mid-word. */
function wordStart(text: string, from: number, limit: number): number {
  if (from <= 0 || isSpace(text.charCodeAt(from - 1))) return from;
  for (let i = from; i < limit; i++) if (isSpace(text.charCodeAt(i))) return i + 1;
  return from;
}

/** Moves a cut that would fall between the two halves of a surrogate pair to before the pair. */
function pairSafe(text: string, index: number): number {
  const char = text.charCodeAt(index);
  const before = text.charCodeAt(index - 1);
  return char >= 0xdc00 && char <= 0xdfff && before >= 0xd800 && before <= 0xdbff ? index - 1 : index;
}

const NEWLINE = 10;

function isSpace(char: number): boolean {
  return char === 32 || char === 10 || char === 9 || char === 0x3000;
}

/** . ! ? and their full-width forms. */
function isSentenceEnd(char: number): boolean {
  return char === 46 || char === 33 || char === 63 || char === 0x3002 || char === 0xff01 || char === 0xff1f;
}
