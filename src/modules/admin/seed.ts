import type { Db } from '../../platform/db/pool.ts';
import * as admin from './service.ts';

export interface DemoCredentials {
  orgId: string;
  clientId: string;
  agencyKey: string;
  clientKey: string;
}

/** On the first start with an empty database: a demo agency with one client and a key of each kind. */
export async function seedDemo(db: Db): Promise<DemoCredentials | null> {
  const any = await db.selectFrom('orgs').select('id').limit(1).executeTakeFirst();
  if (any) return null;
  const org = await admin.createOrg(db, { name: 'Demo Agency' });
  const client = await admin.createClient(db, org.id, { name: 'Demo Client' });
  const agency = await admin.mintKey(db, org.id, { name: 'Demo agency key', kind: 'agency' });
  const clientKey = await admin.mintKey(db, org.id, {
    name: 'Demo client key',
    kind: 'client',
    client_id: client.id,
  });
  await admin.grantFuel(db, org.id, { amount: 1000, reason: 'Demo grant' });
  return { orgId: org.id, clientId: client.id, agencyKey: agency.key, clientKey: clientKey.key };
}
