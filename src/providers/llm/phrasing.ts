import type { GistActivity, GistCompany, GistContact, GistDeal, GistTask } from './types.ts';

/** Small, deterministic wording helpers of the builtin summarizer: no clock, no locale of the machine. */

const DATE = new Intl.DateTimeFormat('en-GB', {
  day: 'numeric',
  month: 'short',
  year: 'numeric',
  timeZone: 'UTC',
});
const NUMBER = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });

/** Collapses whitespace and cuts at `max` characters, never inside a surrogate pair. */
export function clean(text: string, max = 120): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  let end = max - 1;
  if (/[\uD800-\uDBFF]/.test(flat[end - 1] ?? '')) end -= 1;
  return `${flat.slice(0, end).trimEnd()}…`;
}

export function day(value: string): string {
  const date = new Date(value.length === 10 ? `${value}T00:00:00Z` : value);
  return Number.isNaN(date.getTime()) ? clean(value, 40) : DATE.format(date);
}

export function money(amount: number, currency: string): string {
  return `${currency} ${NUMBER.format(amount)}`;
}

/** "a, b and c"; past `max` items, "a, b, c and 2 more". */
export function listOf(items: string[], max = 3, joiner = 'and'): string {
  const shown = items.length > max ? [...items.slice(0, max), `${items.length - max} more`] : items;
  if (shown.length <= 1) return shown.join('');
  return `${shown.slice(0, -1).join(', ')} ${joiner} ${shown[shown.length - 1]}`;
}

export function withArticle(phrase: string): string {
  return `${/^([aeiou]|SMS\b)/i.test(phrase) ? 'an' : 'a'} ${phrase}`;
}

export function sentence(text: string): string {
  const trimmed = text.trim();
  return /[.!?…]["”')]*$/.test(trimmed) ? trimmed : `${trimmed}.`;
}

export function personName(contact: GistContact): string | null {
  const full = contact.full_name ?? [contact.first_name, contact.last_name].filter(Boolean).join(' ');
  return full ? clean(full, 80) : null;
}

/** A contact as a reader would call it: the name, else the primary email or phone. */
export function contactLabel(contact: GistContact): string {
  return (
    personName(contact) ??
    primaryEmail(contact)?.email ??
    primaryPhone(contact)?.phone ??
    'an unnamed contact'
  );
}

export function primaryEmail(contact: GistContact) {
  return contact.emails.find((email) => email.is_primary) ?? contact.emails[0] ?? null;
}

function primaryPhone(contact: GistContact) {
  return contact.phones.find((phone) => phone.is_primary) ?? contact.phones[0] ?? null;
}

export function companyLabel(company: GistCompany): string {
  const name = clean(company.name, 80);
  return company.domain ? `${name} (${company.domain})` : name;
}

const CONSENT: Record<string, string> = {
  opt_in: 'opted in',
  opt_out: 'opted out',
  do_not_call: 'do not call',
};

/** How to reach a contact, and what must not be used: opted-out and do-not-call phones, bounced emails. */
export function channels(contact: GistContact): { usable: string[]; blocked: string[] } {
  const usable: string[] = [];
  const blocked: string[] = [];
  const emails = [...contact.emails].sort((a, b) => Number(b.is_primary) - Number(a.is_primary));
  for (const email of emails) {
    if (email.status === 'bounced') blocked.push(`${email.email} (bounced)`);
    else usable.push(email.status === 'verified' ? `${email.email} (verified)` : email.email);
  }
  const phones = [...contact.phones].sort((a, b) => Number(b.is_primary) - Number(a.is_primary));
  for (const phone of phones) {
    const consent = CONSENT[phone.consent_status];
    if (phone.consent_status === 'opt_out' || phone.consent_status === 'do_not_call' || phone.dnc_scope)
      blocked.push(`${phone.phone} (${consent ?? 'do not call'})`);
    else if (phone.status === 'invalid') blocked.push(`${phone.phone} (invalid)`);
    else usable.push(`${phone.phone} (${[phone.phone_type, consent].filter(Boolean).join(', ')})`);
  }
  return { usable, blocked };
}

export function dealLabel(deal: GistDeal): string {
  const details = [
    deal.amount === null ? null : money(deal.amount, deal.currency),
    deal.stage ? clean(deal.stage, 60) : null,
    deal.expected_close_date ? `closing ${day(deal.expected_close_date)}` : null,
  ].filter(Boolean);
  const name = clean(deal.name, 80);
  return details.length ? `${name} (${details.join(', ')})` : name;
}

/** "USD 15,000 and EUR 2,000": amounts summed per currency, deals without an amount left out. */
export function dealTotal(deals: GistDeal[]): string | null {
  const totals = new Map<string, number>();
  for (const deal of deals)
    if (deal.amount !== null) totals.set(deal.currency, (totals.get(deal.currency) ?? 0) + deal.amount);
  if (!totals.size) return null;
  return listOf(
    [...totals].map(([currency, amount]) => money(amount, currency)),
    totals.size,
  );
}

export function newestFirst(activities: GistActivity[]): GistActivity[] {
  return [...activities].sort((a, b) => b.performed_at.localeCompare(a.performed_at));
}

/** "an outbound call on 1 May 2025, “Pricing”, outcome connected". */
export function activityPhrase(activity: GistActivity, detailed: boolean): string {
  const type = activity.activity_type === 'sms' ? 'SMS' : activity.activity_type.replace(/_/g, ' ');
  const direction = activity.direction && activity.direction !== 'internal' ? `${activity.direction} ` : '';
  let phrase = `${withArticle(`${direction}${type}`)} on ${day(activity.performed_at)}`;
  if (!detailed) return phrase;
  const about = activity.subject ?? activity.body;
  if (about?.trim()) phrase += `, “${clean(about, 80)}”`;
  if (activity.outcome?.trim()) phrase += `, outcome ${clean(activity.outcome, 40)}`;
  return phrase;
}

/** Due soonest first, undated last; more urgent first on the same date. */
export function byDueDate(tasks: GistTask[]): GistTask[] {
  const urgency: Record<string, number> = { urgent: 0, high: 1, normal: 2, low: 3 };
  return [...tasks].sort(
    (a, b) =>
      (a.due_at ?? '\uffff').localeCompare(b.due_at ?? '\uffff') ||
      (urgency[a.priority] ?? 2) - (urgency[b.priority] ?? 2),
  );
}

export function taskLabel(task: GistTask): string {
  const details = [
    task.priority === 'high' || task.priority === 'urgent' ? `${task.priority} priority` : null,
    task.due_at ? `due ${day(task.due_at)}` : null,
    task.status === 'in_progress' ? 'in progress' : null,
  ].filter(Boolean);
  const title = clean(task.title, 80);
  return details.length ? `${title} (${details.join(', ')})` : title;
}
