import { randomUUID } from 'node:crypto';
import type { BenchContext, Measurement, Section } from '../lib.ts';
import { ratioTarget } from '../lib.ts';

/**
 * Issue 25: every creating route of the CRM, each a write and its event, against the one-INSERT
 * ceiling of the same run. Each request creates a new record (contacts: a new identity); activities
 * and tasks name a contact, deals a company, as an integration would.
 */
export default async function creates(ctx: BenchContext): Promise<Section> {
  const { headers } = await ctx.tenant();
  const api = async (path: string, body: unknown) => {
    const response = await fetch(`${ctx.apiUrl}/v1${path}`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`);
    return response.json();
  };
  const { contact } = await api('/crm/contacts', { email: 'subject@bench-creates.example' });
  const { company } = await api('/crm/companies', { name: 'Bench Creates Ltd' });

  const run = randomUUID().slice(0, 8);
  const create = (path: string, body: (n: number) => unknown): Promise<Measurement> => {
    let sequence = 0;
    return ctx.measure(`POST /v1${path}`, {
      url: `${ctx.apiUrl}/v1${path}`,
      method: 'POST',
      headers,
      requests: [
        {
          method: 'POST',
          path: `/v1${path}`,
          setupRequest: (request) => {
            sequence += 1;
            return { ...request, body: JSON.stringify(body(sequence)) };
          },
        },
      ],
    });
  };

  const insertCeiling = await ctx.measure('INSERT (ceiling)', {
    url: `${ctx.ceilingUrl}/insert`,
    method: 'POST',
    body: '{}',
  });
  const routes = [
    await create('/crm/contacts', (n) => ({
      email: `c-${run}-${n}@bench-creates.example`,
      first_name: 'New',
      last_name: `Contact ${n}`,
    })),
    await create('/crm/companies', (n) => ({ name: `Company ${run} ${n}` })),
    await create('/crm/deals', (n) => ({ name: `Deal ${n}`, amount: 1000, company_id: company.id })),
    await create('/crm/activities', (n) => ({
      activity_type: 'note',
      contact_id: contact.id,
      subject: `Note ${n}`,
      body: 'Called back about the renewal.',
    })),
    await create('/crm/tasks', (n) => ({ title: `Follow up ${n}`, contact_id: contact.id })),
  ];
  return {
    title: 'Creating routes: each write and its event against the INSERT ceiling',
    measurements: [insertCeiling, ...routes],
    targets: routes.map((route) => ratioTarget(`${route.name} ÷ INSERT ceiling`, route, insertCeiling, 0.5)),
    notes: ['Each request creates a new record; 50 connections, 8 s each.'],
  };
}
