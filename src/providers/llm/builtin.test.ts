import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BUILTIN_MODEL, BuiltinLlm } from './builtin.ts';
import {
  type BriefSource,
  type EnrichmentSource,
  type GistActivity,
  type GistCompany,
  type GistContact,
  type GistDeal,
  type GistSource,
  LlmUnavailableError,
} from './types.ts';

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

const call: GistActivity = {
  activity_type: 'call',
  direction: 'outbound',
  subject: 'Pricing',
  body: 'Wants 40 seats; call back Thursday.',
  outcome: 'connected',
  performed_at: '2026-05-01T15:30:00.000Z',
};
const sms: GistActivity = {
  activity_type: 'sms',
  direction: 'inbound',
  subject: null,
  body: 'Can we move the demo to Friday?',
  outcome: null,
  performed_at: '2026-05-02T15:30:00.000Z',
};
const bare: GistContact = { ...ada, title: null, lifecycle_stage: null, tags: [], phones: [] };

describe('builtin pre-call brief', () => {
  test('the contact’s gist, its last interactions with what each said, the purpose, and talking points', async () => {
    const source: BriefSource = {
      subject_type: 'contact',
      contact: ada,
      company,
      open_deals: [renewal],
      recent_activities: [sms, call],
      open_tasks: tasks,
      purpose: 'Confirm the demo',
    };
    const written = await llm.brief(source);
    assert.equal(written.model, BUILTIN_MODEL);
    const { summary } = await llm.summarize({ ...source, recent_activities: [sms] });
    assert.ok(written.brief.startsWith(summary), 'the gist of the contact with its last activity first');
    assert.ok(
      written.brief.endsWith(
        ' Last interactions: an inbound SMS on 2 May 2026: “Can we move the demo to Friday?”; ' +
          'an outbound call on 1 May 2026, outcome connected: “Wants 40 seats; call back Thursday.” ' +
          'Purpose of the call: Confirm the demo.',
      ),
      written.brief,
    );
    assert.deepEqual(written.talking_points, [
      'Open with the purpose: Confirm the demo',
      'Follow up on the last call: Wants 40 seats; call back Thursday.',
      'Answer their last message: Can we move the demo to Friday?',
      'Move the deal forward: Renewal 2026 (USD 10,000, Negotiation, closing 30 Jun 2026)',
      'Close the open task: Send the proposal (high priority, due 10 May 2026)',
      'Do not use old@analytical.example (bounced) or +442079460000 (do not call)',
    ]);
    assert.deepEqual(await llm.brief(source), written, 'deterministic');
  });

  test('a contact with no history: ask for the role and the company; interactions past four are counted', async () => {
    const source: BriefSource = {
      subject_type: 'contact',
      contact: bare,
      company: null,
      open_deals: [],
      recent_activities: [],
      open_tasks: [],
      purpose: null,
    };
    const written = await llm.brief(source);
    assert.doesNotMatch(written.brief, /Last interactions|Purpose/);
    assert.deepEqual(written.talking_points, [
      'Do not use old@analytical.example (bounced)',
      'Ask Ada Lovelace about their role',
      'Ask which company they are with',
    ]);
    const busy = await llm.brief({ ...source, recent_activities: Array.from({ length: 7 }, () => sms) });
    assert.equal(
      busy.brief.match(/“Can we move the demo to Friday\?”/g)?.length,
      5,
      'the gist’s and four told',
    );
    assert.match(busy.brief, /3 earlier interactions are on record\.$/);
  });
});

const lead = (fields: Partial<Extract<EnrichmentSource, { subject_type: 'contact' }>>): EnrichmentSource => ({
  subject_type: 'contact',
  contact: bare,
  company: null,
  open_deals: [],
  won_deals: 0,
  recent_activities: [],
  empty_fields: ['title', 'lifecycle_stage', 'tags'],
  ...fields,
});
const intro: GistActivity = {
  ...sms,
  activity_type: 'email',
  subject: 'Intro',
  body: 'Hi, I am the Head of Operations here. Acme Dental runs four clinics in Porto.',
};

describe('builtin enrichment proposals', () => {
  test('a contact: the role an activity names, the stage its deals or messages show, a tag of its company’s industry', async () => {
    const { proposals, model } = await llm.proposeEnrichment(
      lead({ recent_activities: [intro], company: { ...company, industry: 'Dental care' } }),
    );
    assert.equal(model, BUILTIN_MODEL);
    const byField = Object.fromEntries(proposals.map((proposal) => [proposal.field, proposal]));
    assert.deepEqual(Object.keys(byField).sort(), ['lifecycle_stage', 'tags', 'title']);
    assert.equal(byField.title.value, 'Head of Operations');
    assert.match(byField.title.evidence, /Head of Operations/);
    assert.equal(byField.lifecycle_stage.value, 'lead', 'an inbound message, no deal');
    assert.deepEqual(byField.tags.value, ['dental-care']);
    assert.match(byField.tags.evidence, /Analytical Engines is in Dental care/);

    const stage = async (fields: Parameters<typeof lead>[0]) =>
      (await llm.proposeEnrichment(lead({ ...fields, empty_fields: ['lifecycle_stage'] }))).proposals;
    assert.equal((await stage({ won_deals: 2, open_deals: [renewal] }))[0].value, 'customer');
    assert.equal((await stage({ open_deals: [renewal] }))[0].value, 'opportunity');
    assert.deepEqual(await stage({ recent_activities: [call] }), [], 'an outbound call shows nothing');
  });

  test('only the empty fields are proposed, and nothing without evidence', async () => {
    const { proposals } = await llm.proposeEnrichment(
      lead({ recent_activities: [intro], empty_fields: ['tags'] }),
    );
    assert.deepEqual(proposals, [], 'no company industry to tag from; title and stage were not asked');
    assert.deepEqual((await llm.proposeEnrichment(lead({}))).proposals, []);
  });

  test('a company: the industry and what it does, each quoted from where it was read', async () => {
    const dental: EnrichmentSource = {
      subject_type: 'company',
      company: { ...company, name: 'Acme Dental', domain: null, industry: null, business_description: null },
      contacts: [],
      recent_activities: [intro],
      empty_fields: ['industry', 'business_description'],
    };
    const { proposals } = await llm.proposeEnrichment(dental);
    const byField = Object.fromEntries(proposals.map((proposal) => [proposal.field, proposal]));
    assert.equal(byField.industry.value, 'Healthcare');
    assert.match(byField.industry.evidence, /^The company name: “Acme Dental/);
    assert.equal(byField.business_description.value, 'Acme Dental runs four clinics in Porto.');
    assert.match(byField.business_description.evidence, /Acme Dental runs four clinics in Porto/);

    const described = await llm.proposeEnrichment({ ...dental, empty_fields: ['business_description'] });
    assert.deepEqual(
      described.proposals.map((proposal) => proposal.field),
      ['business_description'],
    );
    const silent = await llm.proposeEnrichment({
      ...dental,
      company: { ...dental.company, name: 'Zed Ltd' },
      recent_activities: [call],
    });
    assert.deepEqual(silent.proposals, [], 'nothing says what Zed Ltd is or does');
  });

  test('the failure switch fails each call as an unavailable model would', async () => {
    let left = 2;
    const switched = new BuiltinLlm({ take: async () => left-- > 0 });
    const source = lead({ recent_activities: [intro] });
    await assert.rejects(switched.proposeEnrichment(source), LlmUnavailableError);
    await assert.rejects(
      switched.brief({ ...source, open_tasks: [], purpose: null } as unknown as BriefSource),
      LlmUnavailableError,
    );
    assert.ok((await switched.proposeEnrichment(source)).proposals.length > 0, 'the switch is spent');
  });
});
