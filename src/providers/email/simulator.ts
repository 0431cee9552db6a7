import type { Db } from '../../platform/db/pool.ts';
import { prepareEmail } from './message.ts';
import { recordEmail } from './store.ts';
import type { EmailProvider, EmailSendResult, OutboundEmail } from './types.ts';

/**
 * The offline email provider (`EMAIL_PROVIDER=simulator`): "sending" records the email in PostgreSQL, where
 * any process can list it (`GET /admin/v1/simulator/emails`). A key already recorded records nothing new.
 */
export class SimulatorEmailProvider implements EmailProvider {
  readonly name = 'simulator' as const;

  constructor(
    private readonly db: Db,
    private readonly defaultFrom: string,
  ) {}

  async send(email: OutboundEmail): Promise<EmailSendResult> {
    const prepared = prepareEmail(email, this.defaultFrom);
    const existing = await recordEmail(this.db, this.name, prepared, 'sent');
    return { messageId: existing?.message_id ?? prepared.messageId, sent: existing === null };
  }

  async close(): Promise<void> {}
}
