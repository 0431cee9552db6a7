import { randomBytes } from 'node:crypto';
import { createAgent } from '../modules/agents/service.ts';
import type { AuditContext } from '../modules/audit/service.ts';
import { createClient, mintKey } from '../modules/clients/service.ts';
import { createKnowledgeBaseWithText } from '../modules/knowledge/service.ts';
import { createNumber } from '../modules/numbers/service.ts';
import * as orgs from '../modules/orgs/service.ts';
import { createSequence } from '../modules/sequences/service.ts';
import { createActiveUser } from '../modules/users/service.ts';
import type { Db } from '../platform/db/pool.ts';
import { inTransaction } from '../platform/db/transaction.ts';

/** 555-0100 to 0199 are reserved for fiction: no demo message can reach a real phone. */
const DEMO_HOUSE_NUMBER = '+12025550100';
const DEMO_CLIENT_NUMBER = '+12025550101';

const DEMO_SEQUENCE = {
  name: 'Demo welcome ladder',
  description: 'A text now, an email a day later, a last text two days after that.',
  status: 'active' as const,
  steps: [
    {
      kind: 'sms' as const,
      wait_minutes: 0,
      body: 'Hi {{first_name|there}}, thanks for reaching out to Demo Client!',
    },
    {
      kind: 'email' as const,
      wait_minutes: 1440,
      subject: 'Welcome, {{first_name|friend}}',
      body: 'Hello {{full_name|there}},\n\nHere is what we can do for {{company_name|you}}.',
    },
    {
      kind: 'sms' as const,
      wait_minutes: 2880,
      body: 'Any questions, {{first_name|there}}? Just reply here.',
    },
  ],
};

/** The demo's records were made by the service itself, on the operator's side. */
const SEED: AuditContext = { actor: { type: 'operator', id: null, label: 'demo seed' }, ip: null };

export const DEMO_OWNER_EMAIL = 'owner@demo-agency.test';
export const DEMO_CLIENT_USER_EMAIL = 'client@demo-agency.test';

export interface DemoCredentials {
  orgId: string;
  clientId: string;
  agencyKey: string;
  clientKey: string;
  /** Portal sign-ins: the agency's owner and a user of the demo client, each with a generated password. */
  owner: { email: string; password: string };
  clientUser: { email: string; password: string };
}

/** 18 random bytes: a 24-character password. */
const generatedPassword = () => randomBytes(18).toString('base64url');

/**
 * On the first start with an empty database: a demo agency with one client, a key of each kind, an
 * owner and a client user who can sign in to the portal,
 * FUEL, a phone number for the house client and the demo client (answered by a demo voice agent),
 * an active sequence and a small knowledge base: every feature can be tried at once.
 */
export async function seedDemo(db: Db): Promise<DemoCredentials | null> {
  const any = await db.selectFrom('orgs').select('id').limit(1).executeTakeFirst();
  if (any) return null;
  return inTransaction(db, async (trx) => {
    const org = await orgs.createOrg(trx, { name: 'Demo Agency' });
    const client = await createClient(trx, org.id, { name: 'Demo Client' }, SEED);
    const agency = await mintKey(trx, org.id, { name: 'Demo agency key', kind: 'agency' }, SEED);
    const clientKey = await mintKey(
      trx,
      org.id,
      { name: 'Demo client key', kind: 'client', client_id: client.id },
      SEED,
    );
    const owner = { email: DEMO_OWNER_EMAIL, password: generatedPassword() };
    await createActiveUser(trx, org.id, { email: owner.email, role: 'owner' }, owner.password, SEED);
    const clientUser = { email: DEMO_CLIENT_USER_EMAIL, password: generatedPassword() };
    await createActiveUser(
      trx,
      org.id,
      { email: clientUser.email, role: 'client', client_id: client.id },
      clientUser.password,
      SEED,
    );
    await orgs.grantFuel(trx, org.id, { amount: 1000, reason: 'Demo grant' });
    // Both numbers are E.164 already, so the default country is never consulted.
    await createNumber(trx, org.id, { number: DEMO_HOUSE_NUMBER, label: 'Demo house number' }, 'US');
    const demoClient = { orgId: org.id, clientId: client.id };
    const receptionist = await createAgent(trx, demoClient, {
      name: 'Demo Receptionist',
      kind: 'inbound_voice',
      purpose: 'Answers calls to the demo client number.',
      greeting: 'Thanks for calling Demo Client, how can I help?',
    });
    await createNumber(
      trx,
      org.id,
      {
        number: DEMO_CLIENT_NUMBER,
        client_id: client.id,
        label: 'Demo client number',
        agent_id: receptionist.id,
      },
      'US',
    );
    // Active, but it sends only to contacts enrolled in it.
    await createSequence(trx, demoClient, DEMO_SEQUENCE);
    // Ingested once a worker runs.
    await createKnowledgeBaseWithText(trx, demoClient, {
      name: 'Demo help center',
      description: 'What the demo client’s agents answer from.',
      documents: [
        {
          title: 'Opening hours',
          content:
            'The office is open Monday to Friday from 9:00 to 17:00. On public holidays the office is closed.\n\n' +
            'Urgent requests outside opening hours go to the on-call line, which answers within one hour.',
        },
        {
          title: 'Returns and refunds',
          content:
            'Products can be returned within 30 days of delivery in their original packaging.\n\n' +
            'Refunds are paid to the original payment method within five business days of the return arriving.',
        },
      ],
    });
    return {
      orgId: org.id,
      clientId: client.id,
      agencyKey: agency.key,
      clientKey: clientKey.key,
      owner,
      clientUser,
    };
  });
}
