import type { FastifyRequest } from 'fastify';
import { newId } from '../../platform/db/ids.ts';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';
import {
  type ActorType,
  type AuditFilters,
  type AuditRow,
  insertAudit,
  listAudit as selectAudit,
} from './store.ts';

export type { ActorType, AuditFilters } from './store.ts';

/** Who made a change: a portal user, an API key, or the operator (`ADMIN_TOKEN`). */
export interface AuditActor {
  type: ActorType;
  /** The user's or the key's id; null for the operator. */
  id: string | null;
  /** How the actor read at the time: a user's email, a key's name and prefix. */
  label: string;
}

/** What every function that changes a key, a client, a user or a webhook takes: who acts, and from where. */
export interface AuditContext {
  actor: AuditActor;
  ip: string | null;
}

export type AuditAction =
  | 'api_key.created'
  | 'api_key.revoked'
  | 'client.created'
  | 'client.updated'
  | 'user.invited'
  | 'user.activated'
  | 'user.role_changed'
  | 'user.removed'
  | 'user.password_changed'
  | 'webhook.created'
  | 'webhook.updated'
  | 'webhook.deleted'
  | 'webhook.secret_rotated'
  | 'webhook.enabled'
  | 'webhook.disabled';

export interface AuditEntry extends AuditContext {
  action: AuditAction;
  record: { type: string; id: string };
  /** The client the record belongs to, when it belongs to one. */
  clientId?: string | null;
  /** A small object: the changed fields, a name; never a secret. */
  details?: Record<string, unknown>;
}

/** The operator acting through the admin API. */
export function operatorAudit(request: Pick<FastifyRequest, 'ip'>): AuditContext {
  return { actor: { type: 'operator', id: null, label: 'operator' }, ip: request.ip };
}

/** The API key of a `/v1` request. */
export function apiKeyAudit(request: Pick<FastifyRequest, 'ip' | 'tenant'>): AuditContext {
  const { key } = request.tenant;
  return {
    actor: { type: 'api_key', id: key.id, label: `${key.name} (${key.prefix}…${key.last4})` },
    ip: request.ip,
  };
}

/** A portal user. */
export function userAudit(user: { id: string; email: string }, ip: string | null): AuditContext {
  return { actor: { type: 'user', id: user.id, label: user.email }, ip };
}

/** Appends one entry in the caller's transaction: the change and its record commit together. */
export async function recordAudit(trx: Trx, orgId: string, entry: AuditEntry): Promise<void> {
  await insertAudit(trx, {
    org_id: orgId,
    id: newId(),
    actor_type: entry.actor.type,
    actor_id: entry.actor.id,
    actor_label: entry.actor.label,
    action: entry.action,
    record_type: entry.record.type,
    record_id: entry.record.id,
    client_id: entry.clientId ?? null,
    ip: entry.ip,
    details: JSON.stringify(entry.details ?? {}),
  });
}

export function toAuditEntry(row: AuditRow) {
  return {
    id: row.id,
    actor: { type: row.actor_type, id: row.actor_id, label: row.actor_label },
    action: row.action,
    record: { type: row.record_type, id: row.record_id },
    client_id: row.client_id,
    ip: row.ip,
    details: row.details,
    created_at: row.created_at,
  };
}

/** The org's audit log, newest first. */
export async function listAudit(
  db: Executor,
  orgId: string,
  page: PageRequest<string>,
  filters: AuditFilters = {},
) {
  return (await selectAudit(db, orgId, page, filters)).map(toAuditEntry);
}
