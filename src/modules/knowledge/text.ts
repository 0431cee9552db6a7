/**
 * Text as it is stored and searched: one newline style, no control characters or NUL (PostgreSQL
 * refuses NUL in text), no lone surrogates, spaces collapsed, at most one blank line between paragraphs.
 */
export function normalizeText(text: string): string {
  return (
    text
      .replace(/\r\n?/g, '\n')
      // biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters removed.
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\ufeff]/g, '')
      .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\ufffd')
      // Only runs that are not already one space: replacing every space would be slow on megabytes of text.
      .replace(/ [ \t\u00a0]+|[\t\u00a0][ \t\u00a0]*/g, ' ')
      .replace(/ \n ?|\n /g, '\n')
      .replace(/\n{3,}/g, '\n\n')
      .trim()
  );
}
