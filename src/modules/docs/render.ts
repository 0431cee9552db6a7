import { Marked, type Token, type Tokens } from 'marked';
import sanitizeHtml from 'sanitize-html';

const markdown = new Marked({ gfm: true });

/**
 * What survives into `content_html`: document structure, links and images over http(s) (links
 * also mailto and relative), code with its language class. No scripts, styles, frames, forms,
 * event handlers or `javascript:`/`data:` URLs: a consumer can insert the HTML into its own page.
 */
const ALLOWLIST: sanitizeHtml.IOptions = {
  allowedTags: [
    ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'p', 'blockquote', 'pre', 'hr', 'br'],
    ...['ul', 'ol', 'li', 'table', 'thead', 'tbody', 'tr', 'th', 'td'],
    ...['a', 'img', 'code', 'em', 'strong', 'del', 'sup', 'sub', 'kbd', 'span'],
  ],
  allowedAttributes: {
    a: ['href', 'title', 'rel'],
    img: ['src', 'alt', 'title'],
    th: ['align'],
    td: ['align'],
    ol: ['start'],
  },
  allowedClasses: { code: ['language-*'] },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesByTag: { img: ['http', 'https'] },
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
  transformTags: {
    a: (tagName, attribs) => ({
      tagName,
      attribs: /^https?:/i.test(attribs.href ?? '') ? { ...attribs, rel: 'noopener noreferrer' } : attribs,
    }),
  },
};

const NO_TAGS: sanitizeHtml.IOptions = { allowedTags: [], allowedAttributes: {} };

export interface Rendered {
  /** Sanitized HTML. */
  html: string;
  /** The readable text, without markup: what search matches and snippets come from. */
  text: string;
}

export function renderMarkdown(source: string): Rendered {
  const tokens = markdown.lexer(source);
  const html = sanitizeHtml(markdown.parser(tokens), ALLOWLIST);
  const text = blocksText(tokens)
    .join('\n\n')
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim()
    .normalize('NFC');
  return { html, text };
}

/** Text of raw HTML in Markdown: tags (and script/style contents) dropped, entities decoded. */
function htmlText(html: string): string {
  return sanitizeHtml(html, NO_TAGS)
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
}

function blocksText(tokens: Token[]): string[] {
  return tokens.map(blockText).filter((text) => text.length > 0);
}

function blockText(token: Token): string {
  switch (token.type) {
    case 'space':
    case 'hr':
      return '';
    case 'code':
      return token.text;
    case 'html':
      return htmlText(token.text).trim();
    case 'blockquote':
      return blocksText(token.tokens ?? []).join('\n\n');
    case 'list':
      return (token as Tokens.List).items.map((item) => blocksText(item.tokens).join('\n')).join('\n');
    case 'table': {
      const table = token as Tokens.Table;
      const row = (cells: Tokens.TableCell[]) => cells.map((cell) => inlineText(cell.tokens)).join(' | ');
      return [row(table.header), ...table.rows.map(row)].join('\n');
    }
    default:
      return 'tokens' in token && token.tokens ? inlineText(token.tokens) : textOf(token);
  }
}

function textOf(token: Token): string {
  return 'text' in token && typeof token.text === 'string' ? token.text : '';
}

function inlineText(tokens: Token[]): string {
  let text = '';
  for (const token of tokens) {
    switch (token.type) {
      case 'br':
        text += '\n';
        break;
      case 'html':
        text += htmlText(token.text);
        break;
      case 'image':
        text += token.text;
        break;
      default:
        text += 'tokens' in token && token.tokens ? inlineText(token.tokens) : textOf(token);
    }
  }
  return text;
}
