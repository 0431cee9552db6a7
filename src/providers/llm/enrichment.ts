import { clean, newestFirst } from './phrasing.ts';
import type { EnrichmentProposal, EnrichmentSource, GistActivity } from './types.ts';

/**
 * The builtin enrichment: values for a record's empty fields read from what the record and its
 * activities already hold, each with the text it was read from. Deterministic, offline, and silent
 * when nothing supports a value: no proposal is better than an invented one.
 */
export function proposeEnrichment(source: EnrichmentSource): EnrichmentProposal[] {
  const proposals: EnrichmentProposal[] = [];
  const wanted = new Set<string>(source.empty_fields);
  const activities = newestFirst(source.recent_activities);
  if (source.subject_type === 'contact') {
    if (wanted.has('title')) push(proposals, titleFrom(activities));
    if (wanted.has('lifecycle_stage')) push(proposals, stageOf(source));
    if (wanted.has('tags') && source.company?.industry)
      proposals.push({
        field: 'tags',
        value: [tagOf(source.company.industry)],
        evidence: `The company ${clean(source.company.name, 80)} is in ${clean(source.company.industry, 60)}.`,
      });
    return proposals;
  }
  const texts = companyTexts(source);
  const industry = source.company.industry ?? null;
  const found = industry ? null : industryFrom(texts);
  if (wanted.has('industry') && found) proposals.push({ field: 'industry', ...found });
  if (wanted.has('business_description')) push(proposals, descriptionFrom(source.company.name, texts));
  return proposals;
}

function push(proposals: EnrichmentProposal[], proposal: EnrichmentProposal | null): void {
  if (proposal) proposals.push(proposal);
}

const TITLE =
  /\b(Chief [A-Z][a-z]+ Officer|CEO|CFO|CTO|COO|CMO|CRO|(?:Senior |Regional )?(?:VP|Vice President|Head|Director) of [A-Z][A-Za-z]+(?: [A-Z][A-Za-z]+)?|(?:Co-?founder|Founder|Owner|Office Manager|Operations Manager|Sales Manager|Marketing Manager|Purchasing Manager|Practice Manager|General Manager))\b/;

/** A role named in the newest activity that names one: "I'm the Head of Operations". */
function titleFrom(activities: GistActivity[]): EnrichmentProposal | null {
  for (const activity of activities) {
    for (const text of [activity.subject, activity.body]) {
      const match = text ? TITLE.exec(text) : null;
      if (match && text)
        return { field: 'title', value: match[1], evidence: quote(activity, text, match.index) };
    }
  }
  return null;
}

function stageOf(source: Extract<EnrichmentSource, { subject_type: 'contact' }>): EnrichmentProposal | null {
  if (source.won_deals > 0)
    return {
      field: 'lifecycle_stage',
      value: 'customer',
      evidence: `${source.won_deals} won ${source.won_deals === 1 ? 'deal' : 'deals'} with this contact.`,
    };
  const [deal] = source.open_deals;
  if (deal)
    return {
      field: 'lifecycle_stage',
      value: 'opportunity',
      evidence: `Open deal “${clean(deal.name, 80)}”${deal.stage ? ` at the ${clean(deal.stage, 40)} stage` : ''}.`,
    };
  const inbound = newestFirst(source.recent_activities).find((activity) => activity.direction === 'inbound');
  if (inbound)
    return {
      field: 'lifecycle_stage',
      value: 'lead',
      evidence: quote(inbound, inbound.body ?? inbound.subject ?? inbound.activity_type, 0),
    };
  return null;
}

const INDUSTRIES: [RegExp, string][] = [
  [/\b(software|saas|app|platform|developer|cloud)\b/i, 'Software'],
  [/\b(clinic|health|medical|dental|dentist|hospital|care)\b/i, 'Healthcare'],
  [/\b(bank|finance|financial|insurance|lending|accounting)\b/i, 'Financial services'],
  [/\b(restaurant|cafe|café|bakery|catering|food)\b/i, 'Food and beverage'],
  [/\b(law|legal|attorney|lawyer)\b/i, 'Legal'],
  [/\b(real estate|realty|property|properties|mortgage)\b/i, 'Real estate'],
  [/\b(school|education|university|academy|training)\b/i, 'Education'],
  [/\b(construction|builder|builders|roofing|plumbing|contractor)\b/i, 'Construction'],
  [/\b(marketing|advertising|agency|media)\b/i, 'Marketing'],
  [/\b(logistics|shipping|freight|transport|trucking)\b/i, 'Logistics'],
  [/\b(retail|store|shop|boutique|e-?commerce)\b/i, 'Retail'],
  [/\b(hotel|travel|hospitality|resort)\b/i, 'Hospitality'],
];

interface Text {
  where: string;
  text: string;
}

function companyTexts(source: Extract<EnrichmentSource, { subject_type: 'company' }>): Text[] {
  const { company } = source;
  const texts: Text[] = [{ where: 'The company name', text: company.name }];
  if (company.business_description)
    texts.push({ where: 'The description', text: company.business_description });
  if (company.domain) texts.push({ where: 'The domain', text: company.domain.replace(/[.-]/g, ' ') });
  for (const activity of newestFirst(source.recent_activities))
    for (const text of [activity.subject, activity.body])
      if (text?.trim()) texts.push({ where: activityLabel(activity), text });
  return texts;
}

function industryFrom(texts: Text[]): { value: string; evidence: string } | null {
  for (const { where, text } of texts) {
    for (const [pattern, industry] of INDUSTRIES) {
      const match = pattern.exec(text);
      if (match) return { value: industry, evidence: `${where}: “${excerpt(text, match.index)}”` };
    }
  }
  return null;
}

const DESCRIBES =
  /\b(is|are|provides?|makes?|sells?|builds?|offers?|runs?|helps?|specializes?|specialises?)\b/i;

/** The first sentence of an activity that says what the company is or does, naming it or "we". */
function descriptionFrom(name: string, texts: Text[]): EnrichmentProposal | null {
  const named = new RegExp(`(^|\\W)(${escapeRegExp(name.trim())}|we|our company)(\\W|$)`, 'i');
  for (const { where, text } of texts.slice(1)) {
    if (where === 'The description' || where === 'The domain') continue;
    for (const part of text.split(/(?<=[.!?])\s+/)) {
      if (named.test(part) && DESCRIBES.test(part) && part.length >= 20)
        return {
          field: 'business_description',
          value: clean(part, 300),
          evidence: `${where}: “${clean(part, 200)}”`,
        };
    }
  }
  return null;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function tagOf(industry: string): string {
  return clean(industry, 40)
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

function activityLabel(activity: GistActivity): string {
  const type = activity.activity_type === 'sms' ? 'SMS' : activity.activity_type;
  return `The ${type} of ${activity.performed_at.slice(0, 10)}`;
}

function quote(activity: GistActivity, text: string, at: number): string {
  return `${activityLabel(activity)}: “${excerpt(text, at)}”`;
}

/** About 120 characters of `text` around position `at`. */
function excerpt(text: string, at: number): string {
  const start = Math.max(0, at - 40);
  return `${start > 0 ? '…' : ''}${clean(text.slice(start), 120)}`;
}
