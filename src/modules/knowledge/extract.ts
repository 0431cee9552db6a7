import type { HtmlToTextOptions } from 'html-to-text';
import type { getDocumentProxy } from 'unpdf';
import { lazy } from '../../platform/lazy.ts';
import { normalizeText } from './text.ts';

const readability = lazy(() => import('@mozilla/readability'));
const htmlToTextLib = lazy(() => import('html-to-text'));
const linkedom = lazy(() => import('linkedom'));
const markedLib = lazy(() => import('marked'));
const unpdf = lazy(() => import('unpdf'));

/**
 * The readable text of a document, whatever its source: HTML reduced to its article by Readability
 * (Firefox Reader View) and rendered to text by html-to-text, PDF read by pdf.js (through unpdf),
 * Markdown rendered by marked and then read as HTML, plain text as it is. The result is normalised
 * (see text.ts) and never empty.
 */

export const EXTRACTABLE_TYPES = ['text/plain', 'text/markdown', 'text/html', 'application/pdf'] as const;

export type ExtractionFailure = 'unsupported_type' | 'unreadable' | 'empty';

/** A permanent reason a document has no text; the message is what the document's `error` says. */
export class ExtractionError extends Error {
  constructor(
    readonly reason: ExtractionFailure,
    message: string,
  ) {
    super(message);
    this.name = 'ExtractionError';
  }
}

type Format = 'plain' | 'markdown' | 'html' | 'pdf';

const FORMATS: Record<string, Format> = {
  'text/plain': 'plain',
  'text/markdown': 'markdown',
  'text/x-markdown': 'markdown',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'application/pdf': 'pdf',
};

/** `contentType` is a MIME type with optional parameters, as sent by a server or given by a client. */
export async function extractText(body: Buffer, contentType: string | null): Promise<string> {
  const { mediaType, charset } = parseContentType(contentType);
  const format = FORMATS[mediaType] ?? (mediaType.startsWith('text/') ? 'plain' : sniff(body, mediaType));
  if (!format)
    throw new ExtractionError(
      'unsupported_type',
      `Documents of type ${mediaType || 'unknown'} cannot be read; send ${EXTRACTABLE_TYPES.join(', ')}.`,
    );
  const raw =
    format === 'pdf'
      ? await readPdf(body)
      : format === 'html'
        ? await htmlToText(decode(body, charset ?? metaCharset(body)))
        : format === 'markdown'
          ? await markdownToText(decode(body, charset))
          : decode(body, charset);
  const text = normalizeText(raw);
  if (!text)
    throw new ExtractionError(
      'empty',
      format === 'pdf'
        ? 'The PDF has no text layer (a scanned PDF needs OCR, which is not supported).'
        : 'The document has no readable text.',
    );
  return text;
}

function parseContentType(contentType: string | null): { mediaType: string; charset: string | null } {
  const [type, ...parameters] = (contentType ?? '').split(';');
  const charset = parameters
    .map((parameter) => parameter.trim().split('='))
    .find(([name]) => name.toLowerCase() === 'charset')?.[1];
  return { mediaType: type.trim().toLowerCase(), charset: charset ? charset.replace(/"/g, '').trim() : null };
}

/** A server that says nothing useful about the type: a PDF or an HTML page is still recognised. */
function sniff(body: Buffer, mediaType: string): Format | null {
  if (mediaType && mediaType !== 'application/octet-stream') return null;
  if (body.subarray(0, 5).toString('latin1') === '%PDF-') return 'pdf';
  const start = body.subarray(0, 256).toString('utf8').trimStart().toLowerCase();
  return start.startsWith('<!doctype html') || start.startsWith('<html') ? 'html' : null;
}

function decode(body: Buffer, charset: string | null): string {
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset ?? 'utf-8');
  } catch {
    decoder = new TextDecoder('utf-8');
  }
  const text = decoder.decode(body);
  // Node 20 decodes windows-1252 (also what iso-8859-1 and latin1 mean on the web) as latin1: mend 0x80–0x9F.
  return decoder.encoding === 'windows-1252'
    ? text.replace(/[\u0080-\u009f]/g, (char) => WINDOWS_1252[char.charCodeAt(0) - 0x80])
    : text;
}

/** windows-1252's characters for bytes 0x80–0x9F; the five bytes it leaves undefined stay as they are. */
const WINDOWS_1252 = '€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008dŽ\u008f\u0090‘’“”•–—˜™š›œ\u009džŸ';

/** The charset an HTML page declares in its first kilobyte (`<meta charset>`), as browsers look for it. */
function metaCharset(body: Buffer): string | null {
  const head = body.subarray(0, 1024).toString('latin1');
  return /<meta[^>]+charset=["']?([\w-]+)/i.exec(head)?.[1] ?? null;
}

const TEXT_OPTIONS: HtmlToTextOptions = {
  wordwrap: false,
  selectors: [
    { selector: 'a', options: { ignoreHref: true } },
    { selector: 'img', format: 'skip' },
    ...['script', 'style', 'noscript', 'template', 'svg', 'iframe'].map((selector) => ({
      selector,
      format: 'skip',
    })),
    ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, options: { uppercase: false } })),
    { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false } },
  ],
};

/** The article Readability finds, or the whole body when it finds none (a short page, a bare fragment). */
async function htmlToText(html: string): Promise<string> {
  const [{ Readability }, { parseHTML }, { convert }] = await Promise.all([
    readability(),
    linkedom(),
    htmlToTextLib(),
  ]);
  const { document } = parseHTML(html);
  let article: { content?: string | null; textContent?: string | null } | null = null;
  try {
    article = new Readability(document as unknown as ConstructorParameters<typeof Readability>[0]).parse();
  } catch {
    // Readability gives up on some malformed documents; the whole body is read instead.
  }
  const source = article?.content && article.textContent?.trim() ? article.content : html;
  return convert(source, TEXT_OPTIONS);
}

async function markdownToText(markdown: string): Promise<string> {
  const [{ marked }, { convert }] = await Promise.all([markedLib(), htmlToTextLib()]);
  return convert(marked.parse(markdown, { async: false, gfm: true }), TEXT_OPTIONS);
}

async function readPdf(body: Buffer): Promise<string> {
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>> | null = null;
  try {
    // A copy: pdf.js may detach the buffer it is given.
    const { getDocumentProxy, extractText: pdfText } = await unpdf();
    pdf = await getDocumentProxy(new Uint8Array(body), { verbosity: 0 });
    const { text } = await pdfText(pdf, { mergePages: false });
    return text.join('\n\n');
  } catch (error) {
    const name = (error as { name?: string }).name;
    throw new ExtractionError(
      'unreadable',
      name === 'PasswordException'
        ? 'The PDF is password-protected.'
        : `The PDF could not be read (${(error as Error).message}).`,
    );
  } finally {
    await pdf?.destroy();
  }
}
