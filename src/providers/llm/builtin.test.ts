import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BUILTIN_MODEL, BuiltinLlm } from './builtin.ts';
import type { GistCompany, GistContact, GistDeal, GistSource } from './types.ts';

const company: GistCompany = {
  id: 'c0',
  name: 'Analytical Engines',
  domain: 'analytical.example',
  website: 'https://analytical.example',
  industry: 'software',
  business_description: 'Builds calculating machines for insurers.',
};

const ada: GistContact = {
  id: 'p1',
  full_name: 'Ada Lovelace',
  first_name: 'Ada',
  last_name: 'Lovelace',
  title: 'Head of Engineering',
  lifecycle_stage: 'customer',
  tags: ['vip'],
  phones: [
    {
      phone: '+442079460000',
      phone_type: 'work',
      is_primary: false,
      status: 'verified',
      consent_status: 'do_not_call',
      dnc_scope: 'individual',
    },
    {
      phone: '+447700900123',
      phone_type: 'mobile',
      is_primary: true,
      status: 'verified',
      consent_status: 'opt_in',
      dnc_scope: null,
    },
  ],
  emails: [
    { email: 'old@analytical.example', is_primary: false, status: 'bounced' },
    { email: 'ada@analytical.example', is_primary: true, status: 'verified' },
  ],
};

const renewal: GistDeal = {
  id: 'd1',
  name: 'Renewal 2026',
  amount: 10_000,
  currency: 'USD',
  status: 'open',
  stage: 'Negotiation',
  pipeline: 'Sales',
  expected_close_date: '2026-06-30',
};
const addOn: GistDeal = {
  ...renewal,
  id: 'd2',
  name: 'Add-on seats',
  amount: 5_000.5,
  stage: 'Proposal',
  expected_close_date: null,
};

const activities: GistSource['recent_activities'] = [
  {
    activity_type: 'note',
    direction: 'internal',
    subject: null,
    body: 'Asked for a discount.',
    outcome: null,
    performed_at: '2026-04-20T09:00:00.000Z',
  },
  {
    activity_type: 'call',
    direction: 'outbound',
    subject: 'Pricing follow-up',
    body: null,
    outcome: 'connected',
    performed_at: '2026-05-01T15:30:00.000Z',
  },
  {
    activity_type: 'email',
    direction: 'inbound',
    subject: 'Re: contract',
    body: null,
    outcome: null,
    performed_at: '2026-04-28T08:00:00.000Z',
  },
];

const tasks: GistSource['open_tasks'] = [
  { title: 'Book a demo', task_type: 'meeting', priority: 'normal', status: 'open', due_at: null },
  {
    title: 'Send the proposal',
    task_type: 'email',
    priority: 'high',
    status: 'open',
    due_at: '2026-05-10T12:00:00.000Z',
  },
];

const llm = new BuiltinLlm();

describe('builtin summarizer', () => {
  test('a rich contact: who, company and stage, channels and consent, open deals, last activities, open tasks', async () => {
    const gist = await llm.summarize({
      subject_type: 'contact',
      contact: ada,
      company,
      open_deals: [renewal, addOn],
      recent_activities: activities,
      open_tasks: tasks,
    });
    assert.equal(gist.model, BUILTIN_MODEL);
    assert.equal(
      gist.summary,
      'Ada Lovelace is Head of Engineering at Analytical Engines (analytical.example), at the customer stage. ' +
        'Reachable at ada@analytical.example (verified) or +447700900123 (mobile, opted in). ' +
        'Do not use old@analytical.example (bounced) or +442079460000 (do not call). ' +
        '2 open deals worth USD 15,000.5 in total: Renewal 2026 (USD 10,000, Negotiation, closing 30 Jun 2026) and Add-on seats (USD 5,000.5, Proposal). ' +
        'Last activity: an outbound call on 1 May 2026, “Pricing follow-up”, outcome connected. ' +
        'Before that: an inbound email on 28 Apr 2026 and a note on 20 Apr 2026. ' +
        'Open tasks: Send the proposal (high priority, due 10 May 2026) and Book a demo.',
    );
    assert.deepEqual(gist.highlights, [
      'Stage: customer',
      'Company: Analytical Engines (analytical.example)',
      'Do not use: old@analytical.example (bounced)',
      'Do not use: +442079460000 (do not call)',
      'Open deal: Renewal 2026 (USD 10,000, Negotiation, closing 30 Jun 2026)',
      'Open deal: Add-on seats (USD 5,000.5, Proposal)',
      'Last activity: an outbound call on 1 May 2026, “Pricing follow-up”, outcome connected',
      'Next task: Send the proposal (high priority, due 10 May 2026)',
    ]);
  });

  test('a contact with nothing but an email still reads as plain sentences', async () => {
    const gist = await llm.summarize({
      subject_type: 'contact',
      contact: {
        id: 'p2',
        full_name: null,
        first_name: null,
        last_name: null,
        title: null,
        lifecycle_stage: null,
        tags: [],
        phones: [],
        emails: [{ email: 'someone@example.com', is_primary: true, status: 'unverified' }],
      },
      company: null,
      open_deals: [],
      recent_activities: [],
      open_tasks: [],
    });
    assert.equal(
      gist.summary,
      'The contact someone@example.com has no name, title or company on record. ' +
        'Reachable at someone@example.com. No open deals, activities or open tasks yet.',
    );
    assert.deepEqual(gist.highlights, ['Contact: someone@example.com']);
  });

  test('a company: what it is, its people, the total of its open deals and what happened last', async () => {
    const gist = await llm.summarize({
      subject_type: 'company',
      company,
      contacts: [ada, { ...ada, id: 'p3', full_name: 'Charles Babbage', title: null }],
      open_deals: [renewal, { ...addOn, currency: 'EUR', amount: 2_000 }],
      recent_activities: activities.slice(0, 1),
      open_tasks: [],
    });
    assert.equal(
      gist.summary,
      'Analytical Engines (analytical.example) is a company in software. Builds calculating machines for insurers. ' +
        'People on record: Ada Lovelace (Head of Engineering) and Charles Babbage. ' +
        '2 open deals worth USD 10,000 and EUR 2,000 in total: Renewal 2026 (USD 10,000, Negotiation, closing 30 Jun 2026) and Add-on seats (EUR 2,000, Proposal). ' +
        'Last activity: a note on 20 Apr 2026, “Asked for a discount.” No open tasks yet.',
    );
    assert.ok(gist.highlights.includes('People: 2 on record'));
  });

  test('a bare company with a name only', async () => {
    const gist = await llm.summarize({
      subject_type: 'company',
      company: {
        id: 'c1',
        name: 'Solo Ltd',
        domain: null,
        website: null,
        industry: null,
        business_description: null,
      },
      contacts: [],
      open_deals: [],
      recent_activities: [],
      open_tasks: [],
    });
    assert.equal(
      gist.summary,
      'Solo Ltd is a company. No contacts, open deals, activities or open tasks yet.',
    );
    assert.deepEqual(gist.highlights, []);
  });

  test('a deal: amount, stage and pipeline, close date, its company and primary contact', async () => {
    const gist = await llm.summarize({
      subject_type: 'deal',
      deal: renewal,
      company,
      primary_contact: ada,
      recent_activities: [],
      open_tasks: tasks.slice(1),
    });
    assert.equal(
      gist.summary,
      'Renewal 2026 is an open deal worth USD 10,000 at the Negotiation stage of the Sales pipeline, expected to close on 30 Jun 2026. ' +
        'The deal is with Analytical Engines (analytical.example); the primary contact is Ada Lovelace (Head of Engineering). ' +
        'Ada Lovelace is reachable at ada@analytical.example (verified) or +447700900123 (mobile, opted in). ' +
        'Open task: Send the proposal (high priority, due 10 May 2026). No activities yet.',
    );
    assert.deepEqual(gist.highlights.slice(0, 3), [
      'Status: open, Negotiation',
      'Amount: USD 10,000',
      'Expected close: 30 Jun 2026',
    ]);
  });

  test('a lost deal without amount, company or contact', async () => {
    const gist = await llm.summarize({
      subject_type: 'deal',
      deal: { ...renewal, amount: null, status: 'lost', stage: null },
      company: null,
      primary_contact: null,
      recent_activities: [],
      open_tasks: [],
    });
    assert.equal(
      gist.summary,
      'Renewal 2026 is a lost deal. No company or primary contact is set. No activities or open tasks yet.',
    );
  });

  test('is deterministic, keeps long or hostile text short, and never splits a surrogate pair', async () => {
    const long = `${'word '.repeat(60)}😀😀😀`;
    const source: GistSource = {
      subject_type: 'contact',
      contact: { ...ada, full_name: long, title: `${'x'.repeat(78)}😀tail` },
      company: null,
      open_deals: [],
      recent_activities: [{ ...activities[1], subject: 'line one\n\n\tline two' }],
      open_tasks: [],
    };
    const first = await llm.summarize(source);
    assert.deepEqual(await llm.summarize(source), first);
    assert.ok(first.summary.length < 800, first.summary);
    assert.match(first.summary, /“line one line two”/);
    assert.doesNotMatch(
      first.summary,
      /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/,
    );
  });
});
