/**
 * `npx tsx bench/extraction.ts`: throughput of document text extraction and chunking in one process
 * (one worker's share of a core), on generated text. Not part of `npm run bench`: no server involved.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { chunkText } from '../src/modules/knowledge/chunk.ts';
import { extractText } from '../src/modules/knowledge/extract.ts';
import { normalizeText } from '../src/modules/knowledge/text.ts';

const WORDS =
  'refund shipping order contract agent policy invoice delivery customer support account renewal'.split(' ');

/** Paragraphs of sentences of varied words, about `characters` long; the same text on every run. */
function prose(characters: number): string {
  const parts: string[] = [];
  let length = 0;
  for (let n = 0; length < characters; n++) {
    const words = Array.from({ length: 8 + (n % 9) }, (_, w) => WORDS[(n * 7 + w * 3) % WORDS.length]);
    const sentence = `${words.join(' ')} ${n}.${n % 6 === 5 ? '\n\n' : ' '}`;
    parts.push(sentence);
    length += sentence.length;
  }
  return parts.join('');
}

async function rate(name: string, megabytes: number, run: () => unknown | Promise<unknown>, rounds = 5) {
  await run();
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < rounds; round++) {
    const started = performance.now();
    await run();
    best = Math.min(best, performance.now() - started);
  }
  console.log(
    `${name.padEnd(48)} ${best.toFixed(1).padStart(8)} ms  ${(megabytes / (best / 1000)).toFixed(1).padStart(7)} MB/s`,
  );
}

const text = prose(5 * 1024 * 1024);
const mb = Buffer.byteLength(text) / (1024 * 1024);
await rate(`normalize + chunk, ${mb.toFixed(1)} MB of text`, mb, () => chunkText(normalizeText(text)));
const manual = prose(200_000);
await rate('normalize + chunk, one 200,000-character document', Buffer.byteLength(manual) / 2 ** 20, () =>
  chunkText(normalizeText(manual)),
);

const html = `<!doctype html><html><head><title>Handbook</title></head><body><nav>Home | Docs</nav><article>${prose(
  1024 * 1024,
)
  .split('\n\n')
  .map((paragraph) => `<p>${paragraph}</p>`)
  .join('\n')}</article><footer>© ACME</footer></body></html>`;
const htmlMb = Buffer.byteLength(html) / 2 ** 20;
await rate(
  `HTML → text, ${htmlMb.toFixed(1)} MB page`,
  htmlMb,
  () => extractText(Buffer.from(html), 'text/html'),
  3,
);
const markdown = prose(1024 * 1024).replace(/\n\n/g, '\n\n## Section\n\n');
const mdMb = Buffer.byteLength(markdown) / 2 ** 20;
await rate(
  `Markdown → text, ${mdMb.toFixed(1)} MB`,
  mdMb,
  () => extractText(Buffer.from(markdown), 'text/markdown'),
  3,
);
const pdf = await fs.readFile(path.resolve(import.meta.dirname, '../test/fixtures/handbook.pdf'));
await rate('PDF → text, the 2-page test fixture', pdf.length / 2 ** 20, () =>
  extractText(pdf, 'application/pdf'),
);
