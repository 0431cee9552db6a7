import { clean } from './phrasing.ts';
import type {
  BriefSource,
  EnrichmentProposal,
  EnrichmentSource,
  GistSource,
  GistSummary,
  PrecallBrief,
} from './types.ts';

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

function bounded<T extends GistSource>(source: T): T {
  return {
    ...source,
    recent_activities: source.recent_activities.slice(0, MAX_ITEMS).map((activity) => ({
      ...activity,
      body: activity.body === null ? null : clean(activity.body, MAX_TEXT),
    })),
    open_tasks: source.open_tasks.slice(0, MAX_ITEMS),
    ...('open_deals' in source ? { open_deals: source.open_deals.slice(0, MAX_ITEMS) } : {}),
    ...('contacts' in source ? { contacts: source.contacts.slice(0, MAX_ITEMS) } : {}),
  } as T;
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

const BRIEF_SYSTEM = [
  'You write pre-call briefs: what a salesperson or voice agent must know 30 seconds before calling a contact.',
  'Answer with one JSON object and nothing else: {"brief": string, "talking_points": string[]}.',
  '"brief": 3 to 6 plain sentences: who the contact is, the company, open deals and their stages, the last',
  'interactions (calls with their summaries, SMS, notes), open tasks, and the purpose of the call if given.',
  '"talking_points": up to 6 short points to raise or avoid, such as a number that must not be called.',
  'Use only facts from the record; never invent names, amounts or dates. Write in English.',
].join(' ');

export function briefMessages(source: BriefSource): { role: 'system' | 'user'; content: string }[] {
  return [
    { role: 'system', content: BRIEF_SYSTEM },
    { role: 'user', content: `The contact, as JSON:\n${JSON.stringify(bounded(source))}` },
  ];
}

const ENRICH_SYSTEM = [
  'You propose values for the empty fields of a CRM record, using only what the record and its activities say.',
  'Answer with one JSON object and nothing else: {"proposals": [{"field": string, "value": string or string[],',
  '"evidence": string}]}. "field" is one of the record\'s "empty_fields"; "tags" takes a list of short',
  'lower-case tags, every other field a string; "evidence" quotes the text the value comes from.',
  'Propose nothing for a field the record does not support; never invent. Write in English.',
].join(' ');

export function enrichmentMessages(source: EnrichmentSource): { role: 'system' | 'user'; content: string }[] {
  const record = { ...source, recent_activities: boundedActivities(source.recent_activities) };
  return [
    { role: 'system', content: ENRICH_SYSTEM },
    { role: 'user', content: `The record, as JSON:\n${JSON.stringify(record)}` },
  ];
}

function boundedActivities(activities: GistSource['recent_activities']) {
  return activities.slice(0, MAX_ITEMS).map((activity) => ({
    ...activity,
    body: activity.body === null ? null : clean(activity.body, MAX_TEXT),
  }));
}

/** The outermost JSON object of a model's answer, or null. */
function outermostObject(content: string | null | undefined): Record<string, unknown> | null {
  if (!content) return null;
  const start = content.indexOf('{');
  const end = content.lastIndexOf('}');
  if (start < 0 || end <= start) return null;
  try {
    const parsed: unknown = JSON.parse(content.slice(start, end + 1));
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const MAX_BRIEF = 3000;

/** The brief and talking points of a model's answer, or null when there is no usable brief. */
export function readBrief(content: string | null | undefined): Omit<PrecallBrief, 'model'> | null {
  const parsed = outermostObject(content);
  if (!parsed || typeof parsed.brief !== 'string' || !parsed.brief.trim()) return null;
  return {
    brief: clean(parsed.brief, MAX_BRIEF),
    talking_points: strings(parsed.talking_points)
      .slice(0, MAX_HIGHLIGHTS)
      .map((point) => clean(point, MAX_HIGHLIGHT)),
  };
}

/**
 * The proposals of a model's answer, kept only for the record's empty fields, one per field, each with
 * a value of the field's type and some evidence; null when the answer is not the JSON asked for.
 */
export function readProposals(
  content: string | null | undefined,
  emptyFields: readonly string[],
): EnrichmentProposal[] | null {
  const parsed = outermostObject(content);
  if (!parsed || !Array.isArray(parsed.proposals)) return null;
  const proposals: EnrichmentProposal[] = [];
  for (const item of parsed.proposals as unknown[]) {
    if (typeof item !== 'object' || item === null) continue;
    const { field, value, evidence } = item as Record<string, unknown>;
    if (typeof field !== 'string' || !emptyFields.includes(field)) continue;
    if (proposals.some((proposal) => proposal.field === field)) continue;
    if (typeof evidence !== 'string' || !evidence.trim()) continue;
    const typed =
      field === 'tags'
        ? strings(Array.isArray(value) ? value : [value]).map((tag) => clean(tag, 40).toLowerCase())
        : typeof value === 'string' && value.trim()
          ? clean(value, 300)
          : null;
    if (typed === null || (Array.isArray(typed) && !typed.length)) continue;
    proposals.push({
      field: field as EnrichmentProposal['field'],
      value: typed,
      evidence: clean(evidence, MAX_HIGHLIGHT),
    });
  }
  return proposals;
}

function strings(value: unknown): string[] {
  return Array.isArray(value)
    ? value.filter((item): item is string => typeof item === 'string' && item.trim() !== '')
    : [];
}
