import type { Page } from './content.ts';
import { foldQuery, occurrences, opening, snippet } from './text.ts';

export interface SearchHit {
  page: Page;
  snippet: string;
}

/**
 * Case-insensitive literal substring search over title, description and text. The query is never
 * interpreted: `%`, `_`, quotes and regular-expression characters are plain characters. Pages whose
 * title matches come first, then those whose description matches, then the rest; within each, more
 * occurrences in the text first, then reading order.
 */
export function searchPages(pages: Page[], query: string): SearchHit[] {
  const needle = foldQuery(query);
  if (needle === '') return [];
  const ranked: Array<{ hit: SearchHit; tier: number; count: number; position: number }> = [];
  pages.forEach((page, position) => {
    const { search } = page;
    const inTitle = search.title.includes(needle);
    const inDescription = search.description.includes(needle);
    const at = search.text.lower.indexOf(needle);
    if (!inTitle && !inDescription && at === -1) return;
    ranked.push({
      hit: {
        page,
        snippet: at === -1 ? opening(search.text) : snippet(search.text, at, needle.length),
      },
      tier: inTitle ? 0 : inDescription ? 1 : 2,
      count: at === -1 ? 0 : occurrences(search.text.lower, needle),
      position,
    });
  });
  ranked.sort((a, b) => a.tier - b.tier || b.count - a.count || a.position - b.position);
  return ranked.map((entry) => entry.hit);
}
