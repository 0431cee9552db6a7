import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, test } from 'node:test';
import { ExtractionError, extractText } from './extract.ts';

const fixtures = path.resolve(import.meta.dirname, '../../../test/fixtures');

const articlePage = `<!doctype html><html><head><title>Refund policy · ACME Help</title>
<style>.banner { color: red }</style><script>window.tracking = "do-not-index";</script></head>
<body><nav><a href="/">Home</a> | <a href="/pricing">Pricing</a> | <a href="/login">Log in</a></nav>
<header><div class="logo">ACME Help Center</div></header>
<main><article><h1>Refund policy</h1>
<p>We refund any order within <b>30 days</b> of delivery. Contact <a href="/support">support</a> with your order number.</p>
<h2>How refunds are paid</h2>
<p>Refunds are paid to the original payment method within five business days. Shipping costs are not
refunded unless the item arrived damaged.</p>
<ul><li>Digital goods: refundable if not downloaded.</li><li>Gift cards: not refundable.</li></ul>
<p>For enterprise contracts, the terms of your agreement apply instead of this policy, and your account
manager handles the request.</p><img src="chart.png" alt="chart"></article></main>
<footer>© 2026 ACME · Privacy · Terms · Cookie settings</footer></body></html>`;

const refusal = async (promise: Promise<unknown>, reason: string) => {
  const error = await promise.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  assert.ok(error instanceof ExtractionError, `expected ExtractionError, got ${error}`);
  assert.equal(error.reason, reason);
  return error;
};

describe('document text extraction', () => {
  test('HTML: the article with its paragraphs, headings and list, without navigation, footer, scripts or styles', async () => {
    const text = await extractText(Buffer.from(articlePage), 'text/html; charset=utf-8');
    assert.match(
      text,
      /We refund any order within 30 days of delivery\. Contact support with your order number\./,
    );
    assert.match(text, /How refunds are paid\n\nRefunds are paid to the original payment method/);
    assert.match(text, /\n\* Digital goods: refundable if not downloaded\.\n\* Gift cards: not refundable\./);
    for (const noise of ['Log in', 'Cookie settings', 'do-not-index', 'color: red', 'chart.png', '/support'])
      assert.ok(!text.includes(noise), `${noise} left out`);
  });

  test('HTML without an article to find (a fragment, bare words) is read whole', async () => {
    assert.equal(
      await extractText(Buffer.from('<div>Opening hours: <b>9 to 5</b></div>'), 'text/html'),
      'Opening hours: 9 to 5',
    );
    assert.equal(await extractText(Buffer.from('plain words & more'), 'text/html'), 'plain words & more');
  });

  test('HTML in a legacy charset declared by a meta tag is decoded', async () => {
    const page = Buffer.concat([
      Buffer.from('<html><head><meta charset="windows-1252"></head><body><p>'),
      Buffer.from([0x93, 0x43, 0x61, 0x66, 0xe9, 0x94]),
      Buffer.from('</p></body></html>'),
    ]);
    assert.equal(await extractText(page, 'text/html'), '“Café”');
  });

  test('Markdown is rendered to plain text: no markup left', async () => {
    const markdown =
      '# Onboarding\r\n\r\nRead the **handbook** and the [FAQ](https://example.com/faq).\n\n- Laptop\n- Badge\n\n| Day | Task |\n|---|---|\n| 1 | Setup |\n';
    const text = await extractText(Buffer.from(markdown), 'text/markdown');
    assert.match(text, /^Onboarding\n\nRead the handbook and the FAQ\.\n\n\* Laptop\n\* Badge/);
    assert.match(text, /Day Task\n1 Setup/);
    for (const markup of ['**', '](', '# ', '|---']) assert.ok(!text.includes(markup), markup);
  });

  test('plain text keeps its words; line endings, NUL, control characters and lone surrogates are cleaned', async () => {
    const text = await extractText(
      Buffer.from('Line one\r\nLine\u0000 two\u0007\r\n\r\n\r\n\r\nPara \ud800two\t\tend  '),
      'text/plain',
    );
    assert.equal(text, 'Line one\nLine two\n\nPara \ufffdtwo end');
    assert.equal(await extractText(Buffer.from('a,b\n1,2'), 'text/csv'), 'a,b\n1,2');
    assert.equal(
      await extractText(Buffer.from([0x63, 0x61, 0x66, 0xe9]), 'text/plain; charset=iso-8859-1'),
      'café',
    );
  });

  test('PDF: the text of every page, in order', async () => {
    const pdf = await fs.readFile(path.join(fixtures, 'handbook.pdf'));
    const text = await extractText(pdf, 'application/pdf');
    assert.equal(
      text,
      'Employee Handbook\nRefunds are paid to the original payment method within five business days.\n' +
        'Support answers (by phone or email) from 9:00 to 17:00 on weekdays.\n\n' +
        'Second page\nHoliday requests need two weeks of notice and a manager approval.',
    );
    assert.equal(await extractText(pdf, 'application/octet-stream'), text, 'recognised by its magic number');
  });

  test('a broken PDF, an unsupported type or a document without text is a readable ExtractionError', async () => {
    const broken = await refusal(
      extractText(Buffer.from('%PDF-1.4 not really'), 'application/pdf'),
      'unreadable',
    );
    assert.match(broken.message, /^The PDF could not be read/);
    const image = await refusal(
      extractText(Buffer.from([0x89, 0x50, 0x4e, 0x47]), 'image/png'),
      'unsupported_type',
    );
    assert.equal(
      image.message,
      'Documents of type image/png cannot be read; send text/plain, text/markdown, text/html, application/pdf.',
    );
    await refusal(extractText(Buffer.from('binary'), null), 'unsupported_type');
    const empty = await refusal(
      extractText(Buffer.from('<html><body><script>x()</script></body></html>'), 'text/html'),
      'empty',
    );
    assert.equal(empty.message, 'The document has no readable text.');
    await refusal(extractText(Buffer.from(' \n\t '), 'text/plain'), 'empty');
  });
});
