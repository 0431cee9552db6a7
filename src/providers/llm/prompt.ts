import { clean } from './phrasing.ts';
import type { GistSource, GistSummary } from './types.ts';

/** The Chat Completions messages for a gist, and the defensive reading of the model's answer. */

const SYSTEM = [
  'You summarize CRM records for the sales and support team that owns them.',
  'Answer with one JSON object and nothing else: {"summary": string, "highlights": string[]}.',
  '"summary": 2 to 5 plain sentences: who or what the record is, its company and stage, its open deals',
  'with amounts and stages, its last activities and its open tasks.',
  '"highlights": up to 6 short facts a reader should not miss, such as a phone that must not be called.',
  'Use only facts from the record; never invent names, amounts or dates. Write in English.',
].join(' ');

/** Items per list and characters per free text sent to the model: enough for a gist, bounded in cost. */
const MAX_ITEMS = 10;
const MAX_TEXT = 500;

export function gistMessages(source: GistSource): { role: 'system' | 'user'; content: string }[] {
  return [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: `The record, as JSON:\n${JSON.stringify(bounded(source))}` },
  ];
}

function bounded(source: GistSource): GistSource {
  return {
    ...source,
    recent_activities: source.recent_activities.slice(0, MAX_ITEMS).map((activity) => ({
      ...activity,
      body: activity.body === null ? null : clean(activity.body, MAX_TEXT),
    })),
    open_tasks: source.open_tasks.slice(0, MAX_ITEMS),
    ...('open_deals' in source ? { open_deals: source.open_deals.slice(0, MAX_ITEMS) } : {}),
    ...('contacts' in source ? { contacts: source.contacts.slice(0, MAX_ITEMS) } : {}),
  } as GistSource;
}

const MAX_SUMMARY = 2000;
const MAX_HIGHLIGHTS = 10;
const MAX_HIGHLIGHT = 300;

/**
 * The summary and highlights in a model's answer, or null when there is no usable summary. Models
 * wrap JSON in code fences or a sentence of their own; the outermost object is taken and checked.
 */
export function readGist(content: string | null | undefined): Omit<GistSummary, 'model'> | null {
  if (!content) return null;
  const start = content.indexOf('{');
  const end = content.lastIndexOf('}');
  if (start < 0 || end <= start) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(content.slice(start, end + 1));
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null) return null;
  const { summary, highlights } = parsed as { summary?: unknown; highlights?: unknown };
  if (typeof summary !== 'string' || !summary.trim()) return null;
  return {
    summary: clean(summary, MAX_SUMMARY),
    highlights: Array.isArray(highlights)
      ? highlights
          .filter((item): item is string => typeof item === 'string' && item.trim() !== '')
          .slice(0, MAX_HIGHLIGHTS)
          .map((item) => clean(item, MAX_HIGHLIGHT))
      : [],
  };
}
