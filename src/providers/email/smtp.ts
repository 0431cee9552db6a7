import nodemailer from 'nodemailer';
import type { Db } from '../../platform/db/pool.ts';
import { addressOf, prepareEmail } from './message.ts';
import { markSent, recordEmail, releaseClaim } from './store.ts';
import {
  EmailDeferredError,
  type EmailProvider,
  EmailRejectedError,
  type EmailSendResult,
  type OutboundEmail,
} from './types.ts';

/**
 * Email through an SMTP server (`EMAIL_PROVIDER=smtp`, `SMTP_URL`) with nodemailer. Each key is claimed in
 * PostgreSQL before the server is contacted and marked sent once it accepted the message, so a retried job or
 * a second worker never sends one cause twice. A process that dies between the server's answer and the mark
 * leaves a claim that is taken over after ten minutes: that one email may then go out twice.
 */
export class SmtpEmailProvider implements EmailProvider {
  readonly name = 'smtp' as const;
  private readonly transport: nodemailer.Transporter;

  constructor(
    private readonly db: Db,
    smtpUrl: string,
    private readonly defaultFrom: string,
  ) {
    this.transport = nodemailer.createTransport({
      url: smtpUrl,
      pool: true,
      // nodemailer waits up to ten minutes on a silent socket by default; a worker should not.
      connectionTimeout: 30_000,
      greetingTimeout: 30_000,
      socketTimeout: 60_000,
    });
  }

  async send(email: OutboundEmail): Promise<EmailSendResult> {
    const prepared = prepareEmail(email, this.defaultFrom);
    const existing = await recordEmail(this.db, this.name, prepared, 'sending');
    if (existing?.status === 'sent') return { messageId: existing.message_id, sent: false };
    if (existing)
      throw new EmailDeferredError(`Email ${prepared.key} is being sent by another process.`, null);
    try {
      await this.transport.sendMail({
        from: prepared.from,
        to: prepared.to,
        subject: prepared.subject,
        text: prepared.text,
        ...(prepared.html !== null ? { html: prepared.html } : {}),
        messageId: prepared.messageId,
        headers: prepared.headers,
        envelope: { from: addressOf(prepared.from), to: [prepared.to] },
      });
    } catch (error) {
      await releaseClaim(this.db, prepared.key);
      throw sendError(error);
    }
    await markSent(this.db, prepared.key);
    return { messageId: prepared.messageId, sent: true };
  }

  async close(): Promise<void> {
    this.transport.close();
  }
}

/** A 5xx reply to this message is final; every other failure (4xx, network, time-out, login) may pass later. */
function sendError(error: unknown): EmailDeferredError | EmailRejectedError {
  const failure = error as { responseCode?: number; code?: string; message?: string };
  const code = typeof failure.responseCode === 'number' ? failure.responseCode : null;
  const message = `SMTP: ${failure.message ?? String(error)}`;
  const aboutThisMessage = failure.code === 'EENVELOPE' || failure.code === 'EMESSAGE';
  if (code !== null && code >= 500 && aboutThisMessage) return new EmailRejectedError(message, code);
  return new EmailDeferredError(message, code);
}
