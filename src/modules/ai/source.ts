import { createHash } from 'node:crypto';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import type { Db } from '../../platform/db/pool.ts';
import { canonicalJson } from '../../platform/http/canonical-json.ts';
import type {
  GistActivity,
  GistCompany,
  GistContact,
  GistDeal,
  GistSource,
  GistTask,
} from '../../providers/llm/types.ts';
import { type Activity, searchActivities } from '../activities/service.ts';
import { type CompanyRecord, getCompanies, getCompany } from '../companies/service.ts';
import { EMAIL, listContactChannels, PHONE } from '../contacts/channel-service.ts';
import { type ContactRecord, contactsByIds, getContact, searchContacts } from '../contacts/service.ts';
import { type Deal, getDeal, searchDeals } from '../deals/service.ts';
import { getPipeline, type Pipeline } from '../pipelines/service.ts';
import { searchTasks, type Task } from '../tasks/service.ts';

/**
 * What a gist is written from, read through the owning modules' services (never their tables): the
 * record, its company or people, its open deals, its last activities and its open tasks. Reads run
 * side by side on the pool; the same record gives the same source, and `sourceHash` of it is the
 * gist cache's key, so any change to what is summarized is a miss.
 */

export type SubjectType = GistSource['subject_type'];

/** How much history a gist looks at: the newest activities, open deals and tasks, a company's people. */
const RECENT_ACTIVITIES = 5;
const OPEN_ITEMS = 10;
const PEOPLE = 5;
const CHANNELS = 10;

export async function gistSource(
  db: Db,
  tenant: TenantScope,
  type: SubjectType,
  id: string,
): Promise<GistSource> {
  if (type === 'contact') return contactSource(db, tenant, id);
  if (type === 'company') return companySource(db, tenant, id);
  return dealSource(db, tenant, id);
}

export function sourceHash(source: GistSource): string {
  return createHash('sha256').update(canonicalJson(source)).digest('hex');
}

async function contactSource(db: Db, tenant: TenantScope, id: string): Promise<GistSource> {
  const record = await getContact(db, tenant, id);
  const [contact, company, deals, activities, tasks] = await Promise.all([
    gistContact(db, tenant, record),
    record.company_id ? getCompany(db, tenant, record.company_id).then(gistCompany) : null,
    searchDeals(db, tenant, { contact_id: id, status: 'open' }, { limit: OPEN_ITEMS }),
    searchActivities(db, tenant, { contact_id: id }, { limit: RECENT_ACTIVITIES }),
    searchTasks(db, tenant, { contact_id: id, open: true }, { limit: OPEN_ITEMS }),
  ]);
  return {
    subject_type: 'contact',
    contact,
    company,
    open_deals: await gistDeals(db, tenant, deals),
    recent_activities: activities.map(gistActivity),
    open_tasks: tasks.map(gistTask),
  };
}

async function companySource(db: Db, tenant: TenantScope, id: string): Promise<GistSource> {
  const company = await getCompany(db, tenant, id);
  const [people, deals, activities, tasks] = await Promise.all([
    searchContacts(db, tenant, { company_id: id }, { limit: PEOPLE }, 'US'),
    searchDeals(db, tenant, { company_id: id, status: 'open' }, { limit: OPEN_ITEMS }),
    searchActivities(db, tenant, { company_id: id }, { limit: RECENT_ACTIVITIES }),
    searchTasks(db, tenant, { company_id: id, open: true }, { limit: OPEN_ITEMS }),
  ]);
  return {
    subject_type: 'company',
    company: gistCompany(company),
    contacts: await Promise.all(people.map((person) => gistContact(db, tenant, person))),
    open_deals: await gistDeals(db, tenant, deals),
    recent_activities: activities.map(gistActivity),
    open_tasks: tasks.map(gistTask),
  };
}

async function dealSource(db: Db, tenant: TenantScope, id: string): Promise<GistSource> {
  const deal = await getDeal(db, tenant, id);
  const [[gistDeal], company, contact, activities, tasks] = await Promise.all([
    gistDeals(db, tenant, [deal]),
    deal.company_id ? getCompanies(db, tenant, [deal.company_id]) : [],
    deal.primary_contact_id ? contactsByIds(db, tenant, [deal.primary_contact_id]) : [],
    searchActivities(db, tenant, { deal_id: id }, { limit: RECENT_ACTIVITIES }),
    searchTasks(db, tenant, { deal_id: id, open: true }, { limit: OPEN_ITEMS }),
  ]);
  return {
    subject_type: 'deal',
    deal: gistDeal,
    company: company[0] ? gistCompany(company[0]) : null,
    primary_contact: contact[0] ? await gistContact(db, tenant, contact[0]) : null,
    recent_activities: activities.map(gistActivity),
    open_tasks: tasks.map(gistTask),
  };
}

async function gistContact(db: Db, tenant: TenantScope, contact: ContactRecord): Promise<GistContact> {
  const [phones, emails] = await Promise.all([
    listContactChannels(db, PHONE, tenant, contact.id, { limit: CHANNELS }),
    listContactChannels(db, EMAIL, tenant, contact.id, { limit: CHANNELS }),
  ]);
  return {
    id: contact.id,
    full_name: contact.full_name,
    first_name: contact.first_name,
    last_name: contact.last_name,
    title: contact.title,
    lifecycle_stage: contact.lifecycle_stage,
    tags: contact.tags,
    phones: phones.map((phone) => ({
      phone: String(phone.phone),
      phone_type: String(phone.phone_type),
      is_primary: phone.is_primary,
      status: String(phone.status),
      consent_status: String(phone.consent_status),
      dnc_scope: (phone.dnc_scope as string | null) ?? null,
    })),
    emails: emails.map((email) => ({
      email: String(email.email),
      is_primary: email.is_primary,
      status: String(email.status),
    })),
  };
}

function gistCompany(company: CompanyRecord): GistCompany {
  return {
    id: company.id,
    name: company.name,
    domain: company.domain ?? null,
    website: company.website ?? null,
    industry: company.industry ?? null,
    business_description: company.business_description ?? null,
  };
}

/** Deals with their stage's and pipeline's names, each pipeline read once. */
async function gistDeals(db: Db, tenant: TenantScope, deals: Deal[]): Promise<GistDeal[]> {
  const ids = [...new Set(deals.map((deal) => deal.pipeline_id))];
  const pipelines = new Map<string, Pipeline>(
    (await Promise.all(ids.map((pipelineId) => getPipeline(db, tenant, pipelineId)))).map((p) => [p.id, p]),
  );
  return deals.map((deal) => {
    const pipeline = pipelines.get(deal.pipeline_id);
    return {
      id: deal.id,
      name: deal.name,
      amount: deal.amount,
      currency: deal.currency,
      status: deal.status,
      stage: pipeline?.stages.find((stage) => stage.id === deal.stage_id)?.name ?? null,
      pipeline: pipeline?.name ?? null,
      expected_close_date: deal.expected_close_date,
    };
  });
}

function gistActivity(activity: Activity): GistActivity {
  return {
    activity_type: activity.activity_type,
    direction: activity.direction,
    subject: activity.subject,
    body: activity.body,
    outcome: activity.outcome,
    performed_at: new Date(activity.performed_at).toISOString(),
  };
}

function gistTask(task: Task): GistTask {
  return {
    title: task.title,
    task_type: task.task_type,
    priority: task.priority,
    status: task.status,
    due_at: task.due_at ? new Date(task.due_at).toISOString() : null,
  };
}
