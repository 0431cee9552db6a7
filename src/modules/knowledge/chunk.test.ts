import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CHUNK_SIZE, chunkText, type DocumentChunk } from './chunk.ts';

const LONE_SURROGATE = /^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/;

/** Every chunk is a piece of the text, in order, each starting no later than the previous one ended. */
function assertCovers(text: string, chunks: DocumentChunk[]): void {
  let previousEnd = 0;
  let previousStart = -1;
  chunks.forEach((chunk, index) => {
    assert.equal(chunk.chunk_index, index);
    assert.ok(
      chunk.content.length > 0 && chunk.content.length <= CHUNK_SIZE,
      `chunk ${index} has ${chunk.content.length}`,
    );
    const start = text.indexOf(chunk.content, previousStart + 1);
    assert.ok(start >= 0, `chunk ${index} is a piece of the text`);
    assert.ok(start <= previousEnd, `chunk ${index} leaves no gap`);
    previousStart = start;
    previousEnd = start + chunk.content.length;
  });
  assert.equal(previousEnd, text.trimEnd().length, 'the last chunk reaches the end');
}

const sentence = (n: number) => `Sentence number ${n} says something about refunds and shipping. `;

describe('chunking', () => {
  test('a short text is one chunk; an empty one is none', () => {
    assert.deepEqual(chunkText('  Just a note.  '), [{ chunk_index: 0, content: 'Just a note.' }]);
    assert.deepEqual(chunkText(''), []);
    assert.deepEqual(chunkText(' \n\n '), []);
  });

  test('breaks at paragraph ends when there are some in reach', () => {
    const paragraphs = Array.from({ length: 12 }, (_, p) => sentence(p).repeat(6).trim());
    const text = paragraphs.join('\n\n');
    const chunks = chunkText(text);
    assertCovers(text, chunks);
    for (const chunk of chunks.slice(0, -1))
      assert.ok(chunk.content.endsWith('shipping.'), chunk.content.slice(-30));
    assert.ok(chunks.length >= 6 && chunks.length <= 8, `${chunks.length} chunks`);
  });

  test('breaks at sentence ends without paragraphs, and overlaps at a word start', () => {
    const text = Array.from({ length: 100 }, (_, n) => sentence(n))
      .join('')
      .trim();
    const chunks = chunkText(text);
    assertCovers(text, chunks);
    for (const [index, chunk] of chunks.entries()) {
      if (index < chunks.length - 1) assert.match(chunk.content, /\.$/);
      if (index > 0) {
        const previous = chunks[index - 1].content;
        const head = chunk.content.slice(0, 40);
        assert.ok(previous.includes(head), `chunk ${index} begins inside the previous one`);
        assert.match(chunk.content, /^\S/);
        assert.ok(text.includes(` ${head}`), 'it starts at a word start');
      }
    }
  });

  test('a text without spaces is cut hard, and never between the halves of a surrogate pair', () => {
    // Varied, so each chunk is found in one place only.
    const plain = Array.from({ length: 1500 }, (_, n) => n.toString(36)).join('');
    assertCovers(plain, chunkText(plain));
    const emoji = Array.from({ length: 3000 }, (_, n) => String.fromCodePoint(0x1f300 + (n % 700))).join('');
    const chunks = chunkText(emoji);
    assertCovers(emoji, chunks);
    for (const chunk of chunks) assert.doesNotMatch(chunk.content, LONE_SURROGATE);
    const mixed = `${'a'.repeat(999)}😀${'b'.repeat(2000)}`;
    for (const chunk of chunkText(mixed)) assert.doesNotMatch(chunk.content, LONE_SURROGATE);
  });

  test('is stable: the same text gives the same chunks and indexes', () => {
    const text = Array.from({ length: 300 }, (_, n) => sentence(n) + (n % 7 === 0 ? '\n\n' : '')).join('');
    assert.deepEqual(chunkText(text), chunkText(text));
  });

  test('sizes other than the default are honoured', () => {
    const text = Array.from({ length: 50 }, (_, n) => sentence(n)).join('');
    const chunks = chunkText(text, { size: 300, overlap: 50 });
    for (const chunk of chunks) assert.ok(chunk.content.length <= 300);
    assert.ok(chunks.length > 10);
  });
});
