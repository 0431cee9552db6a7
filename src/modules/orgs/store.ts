import { type Selectable, sql } from 'kysely';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import type { OrgsTable } from '../../platform/db/schema.ts';

export type OrgRow = Selectable<OrgsTable>;

export function findOrg(db: Executor, orgId: string) {
  return db.selectFrom('orgs').selectAll().where('id', '=', orgId).executeTakeFirst();
}

export async function insertOrg(
  trx: Trx,
  org: { id: string; name: string; houseClientId: string },
): Promise<OrgRow> {
  const row = await trx
    .insertInto('orgs')
    .values({
      id: org.id,
      name: org.name,
      house_client_id: org.houseClientId,
      features: JSON.stringify({ sdr_outbound: false }),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await trx
    .insertInto('clients')
    .values({ id: org.houseClientId, org_id: org.id, name: `${org.name} (house)`, is_house: true })
    .execute();
  return row;
}

export function updateOrg(
  trx: Trx,
  orgId: string,
  changes: { name?: string; features?: Record<string, unknown>; timezone?: string | null },
) {
  return trx
    .updateTable('orgs')
    .set({
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(changes.features !== undefined ? { features: JSON.stringify(changes.features) } : {}),
      ...(changes.timezone !== undefined ? { timezone: changes.timezone } : {}),
      updated_at: new Date(),
    })
    .where('id', '=', orgId)
    .returningAll()
    .executeTakeFirst();
}

/** Whether PostgreSQL knows the time zone by this name. */
export async function timeZoneKnown(db: Executor, name: string): Promise<boolean> {
  const row = await db
    .selectFrom(sql<{ name: string }>`pg_timezone_names`.as('z'))
    .select('z.name')
    .where('z.name', '=', name)
    .executeTakeFirst();
  return row !== undefined;
}
