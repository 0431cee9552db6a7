import { type Generated, type Selectable, sql } from 'kysely';
import type { Executor } from '../../platform/db/pool.ts';
import type { Json, NullableTimestamp } from '../../platform/db/schema.ts';
import type { PreparedEmail } from './message.ts';
import type { EmailProviderName } from './types.ts';

export interface EmailMessagesTable {
  key: string;
  provider: EmailProviderName;
  status: 'sending' | 'sent';
  message_id: string;
  from_address: string;
  to_address: string;
  subject: string;
  text_body: string;
  html_body: string | null;
  headers: Json<Record<string, string>>;
  claimed_at: Generated<Date>;
  sent_at: NullableTimestamp;
  created_at: Generated<Date>;
}

export type EmailMessageRow = Selectable<EmailMessagesTable>;

declare module '../../platform/db/schema.ts' {
  interface Database {
    email_messages: EmailMessagesTable;
  }
}

/** A claim older than this belongs to a process that died mid-send: another may take it over. */
const STALE_CLAIM = '10 minutes';

function row(provider: EmailProviderName, email: PreparedEmail, status: 'sending' | 'sent') {
  return {
    key: email.key,
    provider,
    status,
    message_id: email.messageId,
    from_address: email.from,
    to_address: email.to,
    subject: email.subject,
    text_body: email.text,
    html_body: email.html,
    headers: JSON.stringify(email.headers),
    sent_at: status === 'sent' ? sql<Date>`now()` : null,
  };
}

/**
 * Records the email under its key, as `sent` (the simulator) or as `sending` (claimed by this process before
 * it talks to the server). Null when the key is already recorded, with the recorded row; a stale `sending`
 * claim is taken over and counts as recorded now.
 */
export async function recordEmail(
  db: Executor,
  provider: EmailProviderName,
  email: PreparedEmail,
  status: 'sending' | 'sent',
): Promise<EmailMessageRow | null> {
  const inserted = await db
    .insertInto('email_messages')
    .values(row(provider, email, status))
    .onConflict((conflict) =>
      conflict
        .column('key')
        .doUpdateSet({ ...row(provider, email, status), claimed_at: sql<Date>`now()` })
        .where('email_messages.status', '=', 'sending')
        .where('email_messages.claimed_at', '<', sql<Date>`now() - ${STALE_CLAIM}::interval`),
    )
    .returning('key')
    .executeTakeFirst();
  if (inserted) return null;
  const existing = await db
    .selectFrom('email_messages')
    .selectAll()
    .where('key', '=', email.key)
    .executeTakeFirst();
  // Released between the two statements by a failed send elsewhere: record it again.
  return existing ?? recordEmail(db, provider, email, status);
}

export async function markSent(db: Executor, key: string): Promise<void> {
  await db
    .updateTable('email_messages')
    .set({ status: 'sent', sent_at: sql<Date>`now()` })
    .where('key', '=', key)
    .execute();
}

/** Forgets a claim whose send failed, so a later send of the key tries again. */
export async function releaseClaim(db: Executor, key: string): Promise<void> {
  await db.deleteFrom('email_messages').where('key', '=', key).where('status', '=', 'sending').execute();
}

/** What the email simulator "sent", newest first; only one recipient's when `to` is given. */
export async function listSimulatedEmails(
  db: Executor,
  filter: { to?: string; limit: number },
): Promise<EmailMessageRow[]> {
  let query = db
    .selectFrom('email_messages')
    .selectAll()
    .where('provider', '=', 'simulator')
    .orderBy('created_at', 'desc')
    .orderBy('key')
    .limit(filter.limit);
  if (filter.to) query = query.where(sql<string>`lower(to_address)`, '=', filter.to.toLowerCase());
  return query.execute();
}
