/**
 * What a gist is written from and what the summarizer gives back. The source holds what a reader of
 * the record would want summarized, in the API's own field names; the gist module builds it from the
 * CRM services and hashes it, so any change to it is a cache miss.
 */

export type GistSubjectType = 'contact' | 'company' | 'deal';

export interface GistPhone {
  phone: string;
  phone_type: string;
  is_primary: boolean;
  status: string;
  /** unknown, opt_in, opt_out or do_not_call. */
  consent_status: string;
  dnc_scope: string | null;
}

export interface GistEmail {
  email: string;
  is_primary: boolean;
  /** unverified, verified or bounced. */
  status: string;
}

export interface GistContact {
  id: string;
  full_name: string | null;
  first_name: string | null;
  last_name: string | null;
  title: string | null;
  lifecycle_stage: string | null;
  tags: string[];
  phones: GistPhone[];
  emails: GistEmail[];
}

export interface GistCompany {
  id: string;
  name: string;
  domain: string | null;
  website: string | null;
  industry: string | null;
  business_description: string | null;
}

export interface GistDeal {
  id: string;
  name: string;
  amount: number | null;
  currency: string;
  /** open, won or lost. */
  status: string;
  /** The stage's and pipeline's names, resolved by the caller. */
  stage: string | null;
  pipeline: string | null;
  expected_close_date: string | null;
}

export interface GistActivity {
  activity_type: string;
  direction: string | null;
  subject: string | null;
  body: string | null;
  outcome: string | null;
  performed_at: string;
}

export interface GistTask {
  title: string;
  task_type: string;
  priority: string;
  status: string;
  due_at: string | null;
}

/** What every subject shares: its recent history and what is still open around it. */
interface GistContext {
  /** Newest first is conventional; the builtin summarizer sorts them itself. */
  recent_activities: GistActivity[];
  open_tasks: GistTask[];
}

export type GistSource =
  | (GistContext & {
      subject_type: 'contact';
      contact: GistContact;
      company: GistCompany | null;
      open_deals: GistDeal[];
    })
  | (GistContext & {
      subject_type: 'company';
      company: GistCompany;
      /** The company's people, a few at most. */
      contacts: GistContact[];
      open_deals: GistDeal[];
    })
  | (GistContext & {
      subject_type: 'deal';
      deal: GistDeal;
      company: GistCompany | null;
      primary_contact: GistContact | null;
    });

export interface GistSummary {
  summary: string;
  highlights: string[];
  /** Which model wrote it, as the provider reports it. */
  model: string;
}

/**
 * What a pre-call brief is written from: the contact as a gist reads it, with more of its history
 * (the last calls with their summaries, SMS, notes), and why the call is made, when the caller said.
 */
export type BriefSource = Extract<GistSource, { subject_type: 'contact' }> & { purpose: string | null };

export interface PrecallBrief {
  /** What to know 30 seconds before the call, in a few plain sentences. */
  brief: string;
  talking_points: string[];
  model: string;
}

/** The fields an enrichment may fill, by subject. */
export type ContactEnrichmentField = 'title' | 'lifecycle_stage' | 'tags';
export type CompanyEnrichmentField = 'industry' | 'business_description';

/**
 * What an enrichment is proposed from: the record and what its activities already hold. The
 * `empty_fields` are the ones to propose for; a field with a value is never proposed.
 */
export type EnrichmentSource =
  | {
      subject_type: 'contact';
      contact: GistContact;
      company: GistCompany | null;
      open_deals: GistDeal[];
      /** Deals of the contact that were won: the contact is a customer. */
      won_deals: number;
      recent_activities: GistActivity[];
      empty_fields: ContactEnrichmentField[];
    }
  | {
      subject_type: 'company';
      company: GistCompany;
      contacts: GistContact[];
      recent_activities: GistActivity[];
      empty_fields: CompanyEnrichmentField[];
    };

export interface EnrichmentProposal {
  field: ContactEnrichmentField | CompanyEnrichmentField;
  /** A string, or a list of tags for `tags`. */
  value: string | string[];
  /** Where the value comes from, quoted from the record or its activities. */
  evidence: string;
}

export interface EnrichmentProposals {
  proposals: EnrichmentProposal[];
  model: string;
}

export interface LlmProvider {
  readonly name: 'builtin' | 'openai';
  summarize(source: GistSource): Promise<GistSummary>;
  /** A pre-call brief of a contact. */
  brief(source: BriefSource): Promise<PrecallBrief>;
  /** Values for the record's empty fields, each with its evidence; only fields of `empty_fields`. */
  proposeEnrichment(source: EnrichmentSource): Promise<EnrichmentProposals>;
}

/**
 * The model could not be reached or gave no usable answer. The gist module answers 502
 * `ai_unavailable` and bills nothing; the message is safe to show (no keys, no raw response).
 */
export class LlmUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'LlmUnavailableError';
  }
}
