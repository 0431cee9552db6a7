/**
 * What the generated sweeps of issue 17 share: the tenant operations of the route table, a minimal
 * valid value for a request schema, and a registry of "how to make one" per resource, keyed by the
 * route's path up to and including the resource's id parameter. A route whose path names a
 * resource missing from the registry fails the sweep that meets it, so a new module cannot be left
 * out by accident: add one line here and every sweep covers the new routes.
 */
import { randomUUID } from 'node:crypto';
import type { RouteEntry } from '../../src/platform/http/route-table.ts';
import { type Call, caller } from '../crm/crm-client.ts';
import { ADMIN_TOKEN, adminCall, eventually, type TestApp, type TestTenant } from '../helpers.ts';

/** Operations a tenant API key calls: under /v1, documented, not public, not the MCP endpoint. */
export function tenantOperations(routes: readonly RouteEntry[]): RouteEntry[] {
  return routes.filter((route) => {
    const schema = route.schema as (RouteEntry['schema'] & { security?: unknown[] }) | undefined;
    if (!route.url.startsWith('/v1/') || !schema || schema.hide) return false;
    if (['HEAD', 'OPTIONS'].includes(route.method)) return false;
    if (Array.isArray(schema.security) && schema.security.length === 0) return false;
    return true;
  });
}

/** The params of a route path, in order: `/v1/a/:id/b/:bId` -> ['id', 'bId']. */
export function pathParams(url: string): string[] {
  return url
    .split('/')
    .filter((segment) => segment.startsWith(':'))
    .map((segment) => segment.slice(1));
}

/** The path up to and including a param: the registry key of the resource that param names. */
export function resourceKey(url: string, param: string): string {
  const segments = url.split('/');
  return segments.slice(0, segments.indexOf(`:${param}`) + 1).join('/');
}

export function fillPath(url: string, params: Record<string, string>): string {
  return url.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(params[name] ?? 'missing'));
}

let counter = 0;
const next = () => `${process.pid}${++counter}${Math.floor(Math.random() * 1e6)}`;

/**
 * A minimal value that passes the schema: required properties only (plus one optional scalar when
 * an object has no required one, so an update body is not empty), the shortest valid strings.
 */
export function exampleOf(schema: any): unknown {
  if (!schema || typeof schema !== 'object') return {};
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  for (const union of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(schema[union])) {
      const choice = schema[union].find((option: any) => option.type !== 'null') ?? schema[union][0];
      return exampleOf(choice);
    }
  }
  if (Array.isArray(schema.allOf)) return Object.assign({}, ...schema.allOf.map(exampleOf));
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'string':
      return exampleString(schema);
    case 'integer':
    case 'number':
      return schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : 1);
    case 'boolean':
      return false;
    case 'null':
      return null;
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () => exampleOf(schema.items));
    default: {
      const properties: Record<string, any> = schema.properties ?? {};
      const required: string[] = schema.required ?? [];
      const value: Record<string, unknown> = {};
      for (const name of required) value[name] = exampleOf(properties[name]);
      // A range made within one millisecond would be empty, whether `until` is given or is the server's
      // now (webhook recovery): `since` goes an hour back.
      if (typeof value.since === 'string') value.since = new Date(Date.now() - 3_600_000).toISOString();
      if (required.length === 0) {
        const scalar =
          Object.entries(properties).find(([, property]) => property?.type === 'boolean') ??
          Object.entries(properties).find(([, property]) => property?.type === 'string' && !property.format);
        if (scalar) value[scalar[0]] = exampleOf(scalar[1]);
      }
      return value;
    }
  }
}

function exampleString(schema: any): string {
  switch (schema.format) {
    case 'uuid':
      return randomUUID();
    case 'date-time':
      return new Date().toISOString();
    case 'date':
      return '2025-01-31';
    case 'email':
      return `x${next()}@example.com`;
    case 'uri':
      return 'https://example.com/x';
  }
  return 'x'.repeat(Math.max(1, schema.minLength ?? 1));
}

export interface Owner {
  t: TestApp;
  tenant: TestTenant;
  /** The client-bound key of client A. */
  call: Call;
  /** The agency key of the org, for resources only an agency key reaches (`scope: 'agency'`). */
  agency: Call;
  /** The ids made so far, by param name. */
  params: Record<string, string>;
}

/** One resource the API makes: its collection POST (idempotency sweep) and how to make one. */
export interface Creator {
  /** The creating POST of the resource, when the API has one: its body, and the id in its answer. */
  post?: {
    body: () => object;
    id: (body: any) => string;
    /** A body that refers to other resources of the owner, made for it (the idempotency sweep's). */
    bodyFor?: (owner: Owner) => Promise<object>;
  };
  /**
   * Makes one when there is no creating POST of its own (admin calls, rows the system writes);
   * wins over `post` when both are given (`post` then only supplies a valid body for the sweeps).
   */
  make?: (owner: Owner) => Promise<string>;
  /**
   * `agency`: the resource lives at the agency (the org's house client) and only agency keys reach
   * it (SDR). It is made and read with the agency key; a client key of the same org is refused with
   * 403 `agency_key_required`, and the agency key acting as another of its clients is the owner.
   */
  scope?: 'agency';
}

const post = (body: () => object, field: string): Creator => ({
  post: { body, id: (answer) => answer[field].id },
});

/** Keyed by the route path up to the id param (see resourceKey). */
export const creators: Record<string, Creator> = {
  '/v1/crm/contacts/:id': post(() => ({ email: `c${next()}@example.com`, first_name: 'Ada' }), 'contact'),
  '/v1/crm/contacts/:id/phones/:phoneId': post(
    () => ({ phone: `+1415555${String(next()).slice(-4).padStart(4, '0')}` }),
    'phone',
  ),
  '/v1/crm/contacts/:id/emails/:emailId': post(() => ({ email: `e${next()}@example.com` }), 'email'),
  '/v1/crm/companies/:id': post(() => ({ name: `Acme ${next()}` }), 'company'),
  '/v1/crm/pipelines/:id': post(() => ({ name: `P ${next()}`, stages: [{ name: 'Open' }] }), 'pipeline'),
  '/v1/crm/deals/:id': post(() => ({ name: `Deal ${next()}` }), 'deal'),
  '/v1/crm/activities/:id': post(() => ({ activity_type: 'note', body: `n ${next()}` }), 'activity'),
  '/v1/crm/tasks/:id': post(() => ({ title: `T ${next()}` }), 'task'),
  '/v1/crm/lists/:id': post(() => ({ name: `L ${next()}` }), 'list'),
  '/v1/crm/lists/:id/members/:entityId': {
    post: { body: () => ({ contact_ids: [randomUUID()] }), id: (answer) => answer.not_found_ids[0] },
    make: async ({ call, params }) => {
      const contact = await call('POST', '/crm/contacts', { email: `m${next()}@example.com` });
      const added = await call('POST', `/crm/lists/${params.id}/members`, {
        contact_ids: [contact.body.contact.id],
      });
      if (added.status !== 200) throw new Error(`list member: ${added.status} ${JSON.stringify(added.body)}`);
      return contact.body.contact.id;
    },
  },
  '/v1/webhooks/:id': post(() => ({ url: `https://example.com/hook/${next()}`, events: ['*'] }), 'webhook'),
  '/v1/webhooks/:id/deliveries/:deliveryId': {
    // A delivery log record is written by the dispatcher; one is planted directly.
    make: async ({ t, tenant, params }) => {
      const delivery = randomUUID();
      const attempt = randomUUID();
      await t.database.pool.query(
        `INSERT INTO webhook_deliveries (id, org_id, subscription_id, event_id, event_type, event_created_at, status, attempts)
         VALUES ($1, $2, $3, $4, 'webhook.test', now(), 'failed', 1)`,
        [delivery, tenant.orgId, params.id, `evt_${next()}`],
      );
      await t.database.pool.query(
        `INSERT INTO webhook_delivery_attempts (id, org_id, subscription_id, delivery_id, event_id, event_type, attempt, status, error_class, error)
         SELECT $1, org_id, subscription_id, id, event_id, event_type, 1, 'failed', 'network', 'refused' FROM webhook_deliveries WHERE id = $2`,
        [attempt, delivery],
      );
      return attempt;
    },
  },
  '/v1/events/:id': {
    make: async ({ call }) => {
      await call('POST', '/crm/contacts', { email: `ev${next()}@example.com` });
      const events = await call('GET', '/events?limit=1');
      return events.body.data[0].id;
    },
  },
  '/v1/numbers/:id': {
    make: async ({ t, tenant }) => {
      const { number } = await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/numbers`, {
        number: phoneNumber(),
        client_id: tenant.clientId,
      });
      return number.id;
    },
  },
  '/v1/agents/:idOrSlug': post(() => ({ name: `Agent ${next()}`, kind: 'sms' }), 'agent'),
  '/v1/calls/:id': {
    make: async ({ t, tenant }) => {
      const to = phoneNumber();
      await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/numbers`, {
        number: to,
        client_id: tenant.clientId,
      });
      const response = await t.app.inject({
        method: 'POST',
        url: '/admin/v1/simulator/calls',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        payload: { direction: 'inbound', from: phoneNumber(), to, outcome: 'no_answer' },
      });
      if (response.statusCode !== 202)
        throw new Error(`simulated call: ${response.statusCode} ${response.body}`);
      return response.json().call_id;
    },
  },
  // SMS: a conversation opens when a message arrives at one of the client's numbers.
  '/v1/sms/conversations/:id': {
    make: async ({ t, tenant, call }) => {
      const to = phoneNumber();
      const from = phoneNumber();
      await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/numbers`, {
        number: to,
        client_id: tenant.clientId,
      });
      const inbound = await t.app.inject({
        method: 'POST',
        url: '/admin/v1/simulator/sms/inbound',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        payload: { from, to, body: 'Hello' },
      });
      if (inbound.statusCode !== 202) throw new Error(`inbound sms: ${inbound.statusCode} ${inbound.body}`);
      const conversations = await call('GET', `/sms/conversations?phone_number=${encodeURIComponent(from)}`);
      return conversations.body.data[0].id;
    },
  },
  '/v1/sequences/:id': post(
    () => ({ name: `S ${next()}`, steps: [{ kind: 'sms', wait_minutes: 0, body: 'Hi' }] }),
    'sequence',
  ),
  '/v1/sequences/:id/enrollments/:enrollmentId': {
    post: {
      body: () => ({ contact_id: randomUUID() }),
      id: (answer) => answer.enrollment.id,
      bodyFor: async ({ call }) => ({
        contact_id: await madeBy(call, '/crm/contacts', { email: `s${next()}@example.com` }, 'contact'),
      }),
    },
    make: async ({ call, params }) => {
      const contact = await call('POST', '/crm/contacts', { email: `s${next()}@example.com` });
      const enrolled = await call('POST', `/sequences/${params.id}/enrollments`, {
        contact_id: contact.body.contact.id,
      });
      if (enrolled.status !== 201)
        throw new Error(`enrollment: ${enrolled.status} ${JSON.stringify(enrolled.body)}`);
      return enrolled.body.enrollment.id;
    },
  },
  '/v1/kb/:id': post(() => ({ name: `KB ${next()}` }), 'knowledge_base'),
  '/v1/kb/:id/documents/:docId': post(
    () => ({ title: `Doc ${next()}`, source_type: 'manual', content: 'Opening hours are nine to five.' }),
    'document',
  ),
  // A signed upload target: no route reads it back (the document made from it is the resource).
  '/v1/kb/:id/uploads/:storagePath': {
    post: {
      body: () => ({ filename: `f${next()}.txt`, mime_type: 'text/plain', byte_size: 10 }),
      id: (answer) => answer.upload.storage_path,
    },
  },
  // Gists summarize CRM records: the path's id is the record's.
  '/v1/ai/contacts/:id': {
    make: ({ call }) => madeBy(call, '/crm/contacts', { email: `g${next()}@example.com` }, 'contact'),
  },
  '/v1/ai/companies/:id': {
    make: ({ call }) => madeBy(call, '/crm/companies', { name: `G ${next()}` }, 'company'),
  },
  '/v1/ai/deals/:id': { make: ({ call }) => madeBy(call, '/crm/deals', { name: `G ${next()}` }, 'deal') },
  // An AI job: a pre-call brief of a contact, paid from a grant.
  '/v1/ai/jobs/:id': {
    make: async ({ t, tenant, call }) => {
      await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/fuel`, { amount: 5 });
      const contact = await madeBy(call, '/crm/contacts', { email: `j${next()}@example.com` }, 'contact');
      const asked = await call('POST', `/ai/contacts/${contact}/precall-brief`, {});
      if (asked.status !== 202) throw new Error(`brief: ${asked.status} ${JSON.stringify(asked.body)}`);
      return asked.body.job.id;
    },
  },
  '/v1/sdr/campaigns/:id': {
    scope: 'agency',
    post: {
      body: () => ({ name: `Campaign ${next()}` }),
      id: (answer) => answer.campaign.id,
      bodyFor: (owner) => campaignBody(owner),
    },
    make: async (owner) => madeBy(owner.agency, '/sdr/campaigns', await campaignBody(owner), 'campaign'),
  },
  '/v1/sdr/campaigns/:id/prospects/:prospectId': {
    scope: 'agency',
    post: {
      body: () => ({ contact_ids: [] }),
      id: () => 'no id: the answer counts what was added',
      bodyFor: async ({ call }) => ({
        contact_ids: [await madeBy(call, '/crm/contacts', { email: `p${next()}@example.com` }, 'contact')],
      }),
    },
    make: async ({ call, agency, params }) => {
      const contact = await madeBy(call, '/crm/contacts', { email: `p${next()}@example.com` }, 'contact');
      const added = await agency('POST', `/sdr/campaigns/${params.id}/prospects`, { contact_ids: [contact] });
      if (added.status !== 201) throw new Error(`prospect: ${added.status} ${JSON.stringify(added.body)}`);
      const prospects = await agency('GET', `/sdr/campaigns/${params.id}/prospects`);
      return prospects.body.data[0].id;
    },
  },
  // Clients and keys are managed by the agency for its whole org.
  '/v1/clients/:id': { scope: 'agency', ...post(() => ({ name: `Client ${next()}` }), 'client') },
  '/v1/api-keys/:id': {
    scope: 'agency',
    post: { body: () => ({ name: `Key ${next()}`, kind: 'agency' }), id: (answer) => answer.api_key.id },
  },
};

/**
 * Seeds for list routes that no creator above fills (a creator whose path is `<list>/:param` fills
 * `<list>`, after the list's parents are made): each makes sure the list shows a record of the owner,
 * and may name the query to read the list with. Keyed by the list's route path.
 */
export const listSeeds: Record<string, (owner: Owner) => Promise<string | undefined>> = {
  // A client's ledger shows its own debits: one gist, paid from a grant.
  '/v1/fuel/ledger': async ({ t, tenant, call }) => {
    await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/fuel`, { amount: 5 });
    const contact = await madeBy(call, '/crm/contacts', { email: `f${next()}@example.com` }, 'contact');
    const gist = await call('POST', `/ai/contacts/${contact}/gist`, {});
    if (gist.status >= 300) throw new Error(`gist: ${gist.status} ${JSON.stringify(gist.body)}`);
    return undefined;
  },
  // The conversation's creator makes it with the inbound message that opened it.
  '/v1/sms/conversations/:id/messages': async () => undefined,
  // Search reads ready documents: a worker ingests the base's document, found by a word of it.
  '/v1/kb/:id/search': async (owner) => {
    const documents = `${(await makePath(owner, '/v1/kb/:id')).replace(/^\/v1/, '')}/documents`;
    const doc = await madeBy(
      owner.call,
      documents,
      { title: `Hours ${next()}`, source_type: 'manual', content: 'Opening hours are nine to five.' },
      'document',
    );
    await owner.t.startWorker();
    await eventually(
      async () => (await owner.call('GET', `${documents}/${doc}`)).body.document.status === 'ready',
      20_000,
    );
    return '?q=hours';
  },
};

/** Whether a route's 200 answer is a list: an object with a `data` array. */
export function isListRoute(route: RouteEntry): boolean {
  const ok = (route.schema?.response as Record<string, any> | undefined)?.['200'];
  return route.method === 'GET' && ok?.properties?.data?.type === 'array';
}

/**
 * Makes sure `owner` has a record in the list at `url`: its parents, then the creators whose path is
 * the list's plus an id, then the list's seed. Returns the query the seed names, if any. Throws,
 * naming the list, when neither a creator nor a seed fills it.
 */
export async function seedList(owner: Owner, url: string): Promise<string | undefined> {
  const keys = Object.keys(creators).filter((key) => key.slice(0, key.lastIndexOf('/')) === url);
  const seed = listSeeds[url];
  if (keys.length === 0 && !seed)
    throw new Error(`no creator or list seed for ${url}: add one to test/reliability/route-sweep.ts`);
  await makePath(owner, url);
  for (const key of keys) await makePath(owner, key);
  return seed?.(owner);
}

/** A campaign of an org with SDR turned on, calling from a number of its own. */
async function campaignBody({ t, tenant }: Owner) {
  const from = phoneNumber();
  await adminCall(t.app, 'PATCH', `/orgs/${tenant.orgId}`, { features: { sdr_outbound: true } });
  await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/numbers`, { number: from });
  return { name: `Campaign ${next()}`, from_number: from };
}

/** POSTs `body` to `collection` and returns the id of the answer's `field`, or throws. */
async function madeBy(call: Call, collection: string, body: object, field: string): Promise<string> {
  const answer = await call('POST', collection, body);
  if (answer.status >= 300) throw new Error(`${collection}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body[field].id;
}

let numbers = 0;
function phoneNumber(): string {
  numbers += 1;
  return `+1415${String(5_000_000 + ((process.pid * 7919 + numbers * 104_729) % 4_999_999)).padStart(7, '0')}`;
}

/**
 * Fills every param of `url` with a resource of `owner`, making the missing ones (parents first).
 * Throws, naming the key, when the registry has no creator for one.
 */
export async function makePath(owner: Owner, url: string): Promise<string> {
  for (const param of pathParams(url)) {
    const key = resourceKey(url, param);
    if (owner.params[key]) continue;
    const creator = creators[key];
    if (!creator)
      throw new Error(`no creator for ${key}: add one to creators in test/reliability/route-sweep.ts`);
    const params = paramsFor(owner, key);
    let id: string;
    if (creator.make) {
      id = await creator.make({ ...owner, params });
    } else {
      const collection = fillPath(key.slice(0, key.lastIndexOf('/')), params).replace(/^\/v1/, '');
      const answer = await callerOf(owner, key)('POST', collection, creator.post!.body());
      if (answer.status >= 300)
        throw new Error(`${collection}: ${answer.status} ${JSON.stringify(answer.body)}`);
      id = creator.post!.id(answer.body);
    }
    owner.params[key] = id;
  }
  return fillPath(url, paramsFor(owner, url));
}

/** The ids made for the resources on the way to `url`, by param name. */
function paramsFor(owner: Owner, url: string): Record<string, string> {
  return Object.fromEntries(
    Object.entries(owner.params)
      .filter(([path]) => url === path || url.startsWith(`${path}/`))
      .map(([path, id]) => [path.split('/').pop()!.slice(1), id]),
  );
}

export function ownerOf(t: TestApp, tenant: TestTenant): Owner {
  return { t, tenant, call: caller(t, tenant.client), agency: caller(t, tenant.agency), params: {} };
}

/** Whether a resource on the way to `url` lives at the agency (see Creator.scope). */
export function agencyScoped(url: string): boolean {
  return (
    pathParams(url).some((param) => creators[resourceKey(url, param)]?.scope === 'agency') ||
    Object.entries(creators).some(
      ([key, creator]) => creator.scope === 'agency' && key.slice(0, key.lastIndexOf('/')) === url,
    )
  );
}

/** The key the owner uses for `url`: the agency key for agency resources, else client A's. */
export function callerOf(owner: Owner, url: string): Call {
  return agencyScoped(url) ? owner.agency : owner.call;
}
