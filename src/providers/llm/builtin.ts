import { writeBrief } from './brief.ts';
import { proposeEnrichment } from './enrichment.ts';
import {
  activityPhrase,
  byDueDate,
  channels,
  clean,
  companyLabel,
  contactLabel,
  day,
  dealLabel,
  dealTotal,
  listOf,
  money,
  newestFirst,
  personName,
  sentence,
  taskLabel,
} from './phrasing.ts';
import type { SimulatedFailures } from './simulated-failures.ts';
import {
  type BriefSource,
  type EnrichmentProposals,
  type EnrichmentSource,
  type GistCompany,
  type GistContact,
  type GistDeal,
  type GistSource,
  type GistSummary,
  type LlmProvider,
  LlmUnavailableError,
  type PrecallBrief,
} from './types.ts';

/** Changes whenever the wording changes, so cached gists of an older wording can be told apart. */
export const BUILTIN_MODEL = 'builtin-summarizer-1';

/**
 * The offline model: gists (plain sentences about who or what the record is, what is open around it
 * and what happened last, plus highlights), pre-call briefs and enrichment proposals. Deterministic:
 * the same source gives the same answer. It fails only when the simulator's failure switch says so.
 */
export class BuiltinLlm implements LlmProvider {
  readonly name = 'builtin';

  constructor(private readonly failures: SimulatedFailures | null = null) {}

  async summarize(source: GistSource): Promise<GistSummary> {
    await this.failIfSwitched();
    return { ...summarize(source), model: BUILTIN_MODEL };
  }

  async brief(source: BriefSource): Promise<PrecallBrief> {
    await this.failIfSwitched();
    const gist = summarize({ ...source, recent_activities: source.recent_activities.slice(0, 1) });
    return { ...writeBrief(source, gist.summary), model: BUILTIN_MODEL };
  }

  async proposeEnrichment(source: EnrichmentSource): Promise<EnrichmentProposals> {
    await this.failIfSwitched();
    return { proposals: proposeEnrichment(source), model: BUILTIN_MODEL };
  }

  private async failIfSwitched(): Promise<void> {
    if (await this.failures?.take())
      throw new LlmUnavailableError('The model is unavailable (a simulated failure).');
  }
}

interface Draft {
  sentences: string[];
  highlights: string[];
}

export function summarize(source: GistSource): Omit<GistSummary, 'model'> {
  const draft: Draft = { sentences: [], highlights: [] };
  const missing: string[] = [];
  if (source.subject_type === 'contact') {
    describeContact(draft, source.contact, source.company);
    describeOpenDeals(draft, source.open_deals, missing);
  } else if (source.subject_type === 'company') {
    describeCompany(draft, source.company, source.contacts, missing);
    describeOpenDeals(draft, source.open_deals, missing);
  } else {
    describeDeal(draft, source.deal, source.company, source.primary_contact);
  }
  describeActivities(draft, source.recent_activities, missing);
  describeTasks(draft, source.open_tasks, missing);
  if (missing.length) draft.sentences.push(`No ${listOf(missing, missing.length, 'or')} yet.`);
  return { summary: draft.sentences.map(sentence).join(' '), highlights: draft.highlights };
}

function describeContact(draft: Draft, contact: GistContact, company: GistSource['company']): void {
  const name = personName(contact);
  const who = name ?? `The contact ${contactLabel(contact)}`;
  const title = contact.title ? clean(contact.title, 80) : null;
  const stage = contact.lifecycle_stage ? clean(contact.lifecycle_stage, 40) : null;
  let identity: string;
  if (company && title) identity = `${who} is ${title} at ${companyLabel(company)}`;
  else if (company) identity = `${who} is a contact at ${companyLabel(company)}`;
  else if (title) identity = `${who}, ${title}, has no company on record`;
  else
    identity = name
      ? `${who} has no title or company on record`
      : `${who} has no name, title or company on record`;
  if (stage) identity += `, at the ${stage} stage`;
  draft.sentences.push(identity);
  if (stage) draft.highlights.push(`Stage: ${stage}`);
  if (company) draft.highlights.push(`Company: ${companyLabel(company)}`);

  const { usable, blocked } = channels(contact);
  draft.sentences.push(
    usable.length ? `Reachable at ${listOf(usable, 3, 'or')}` : 'No usable email or phone is on record',
  );
  if (!name && usable.length) draft.highlights.push(`Contact: ${usable[0]}`);
  if (blocked.length) {
    draft.sentences.push(`Do not use ${listOf(blocked, 3, 'or')}`);
    for (const channel of blocked.slice(0, 2)) draft.highlights.push(`Do not use: ${channel}`);
  }
}

function describeCompany(draft: Draft, company: GistCompany, people: GistContact[], missing: string[]): void {
  const industry = company.industry ? clean(company.industry, 60) : null;
  draft.sentences.push(
    industry
      ? `${companyLabel(company)} is a company in ${industry}`
      : `${companyLabel(company)} is a company`,
  );
  if (company.business_description?.trim()) draft.sentences.push(clean(company.business_description, 240));
  if (industry) draft.highlights.push(`Industry: ${industry}`);
  if (company.website) draft.highlights.push(`Website: ${clean(company.website, 100)}`);
  if (!people.length) {
    missing.push('contacts');
    return;
  }
  const labels = people.map((person) => {
    const label = contactLabel(person);
    return person.title ? `${label} (${clean(person.title, 60)})` : label;
  });
  draft.sentences.push(`People on record: ${listOf(labels)}`);
  draft.highlights.push(`People: ${people.length} on record`);
}

function describeDeal(
  draft: Draft,
  deal: GistDeal,
  company: GistSource['company'],
  contact: GistContact | null,
): void {
  const worth = deal.amount === null ? '' : ` worth ${money(deal.amount, deal.currency)}`;
  const stage = deal.stage
    ? ` at the ${clean(deal.stage, 60)} stage${deal.pipeline ? ` of the ${clean(deal.pipeline, 60)} pipeline` : ''}`
    : '';
  const close =
    deal.status === 'open' && deal.expected_close_date
      ? `, expected to close on ${day(deal.expected_close_date)}`
      : '';
  draft.sentences.push(
    `${clean(deal.name, 80)} is ${deal.status === 'open' ? 'an open' : `a ${deal.status}`} deal${worth}${stage}${close}`,
  );
  draft.highlights.push(`Status: ${deal.status}${deal.stage ? `, ${clean(deal.stage, 60)}` : ''}`);
  if (deal.amount !== null) draft.highlights.push(`Amount: ${money(deal.amount, deal.currency)}`);
  if (close) draft.highlights.push(`Expected close: ${day(deal.expected_close_date as string)}`);

  const person = contact
    ? `${contactLabel(contact)}${contact.title ? ` (${clean(contact.title, 60)})` : ''}`
    : null;
  if (company && person)
    draft.sentences.push(`The deal is with ${companyLabel(company)}; the primary contact is ${person}`);
  else if (company)
    draft.sentences.push(`The deal is with ${companyLabel(company)}, with no primary contact set`);
  else if (person) draft.sentences.push(`The primary contact is ${person}, with no company set`);
  else draft.sentences.push('No company or primary contact is set');
  if (company) draft.highlights.push(`Company: ${companyLabel(company)}`);
  if (contact) {
    draft.highlights.push(`Primary contact: ${contactLabel(contact)}`);
    const { usable } = channels(contact);
    if (usable.length)
      draft.sentences.push(`${contactLabel(contact)} is reachable at ${listOf(usable, 2, 'or')}`);
  }
}

function describeOpenDeals(draft: Draft, deals: GistDeal[], missing: string[]): void {
  if (!deals.length) {
    missing.push('open deals');
    return;
  }
  const total = dealTotal(deals);
  const count = deals.length === 1 ? 'One open deal' : `${deals.length} open deals`;
  draft.sentences.push(
    `${count}${total && deals.length > 1 ? ` worth ${total} in total` : ''}: ${listOf(deals.map(dealLabel))}`,
  );
  for (const deal of deals.slice(0, 3)) draft.highlights.push(`Open deal: ${dealLabel(deal)}`);
}

function describeActivities(
  draft: Draft,
  activities: GistSource['recent_activities'],
  missing: string[],
): void {
  if (!activities.length) {
    missing.push('activities');
    return;
  }
  const [last, ...earlier] = newestFirst(activities);
  draft.sentences.push(`Last activity: ${activityPhrase(last, true)}`);
  if (earlier.length)
    draft.sentences.push(
      `Before that: ${listOf(
        earlier.map((activity) => activityPhrase(activity, false)),
        2,
      )}`,
    );
  draft.highlights.push(`Last activity: ${activityPhrase(last, true)}`);
}

function describeTasks(draft: Draft, tasks: GistSource['open_tasks'], missing: string[]): void {
  if (!tasks.length) {
    missing.push('open tasks');
    return;
  }
  const sorted = byDueDate(tasks);
  draft.sentences.push(`Open ${sorted.length === 1 ? 'task' : 'tasks'}: ${listOf(sorted.map(taskLabel))}`);
  draft.highlights.push(`Next task: ${taskLabel(sorted[0])}`);
}
