import type { Tenant } from '../../platform/auth/tenant.ts';
import type { Executor } from '../../platform/db/pool.ts';
import { type EventEnvelope, toEnvelope } from '../../platform/events/emit.ts';
import { errors } from '../../platform/http/errors.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';
import { findEvent, listEvents } from './store.ts';

/** `GET /events`: the events the caller can see, newest first. */
export async function searchEvents(
  db: Executor,
  tenant: Tenant,
  filter: { type?: string },
  page: PageRequest<string>,
): Promise<EventEnvelope[]> {
  return (await listEvents(db, tenant, filter, page)).map(toEnvelope);
}

export async function getEvent(db: Executor, tenant: Tenant, id: string): Promise<EventEnvelope> {
  const row = await findEvent(db, tenant, id);
  if (!row) throw errors.notFound('Event', id);
  return toEnvelope(row);
}
