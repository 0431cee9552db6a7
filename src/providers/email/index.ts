import type { Config } from '../../config.ts';
import type { Db } from '../../platform/db/pool.ts';
import { SimulatorEmailProvider } from './simulator.ts';
import type { EmailProvider } from './types.ts';

export { type EmailMessageRow, listSimulatedEmails } from './store.ts';
export * from './types.ts';

/** The email provider `EMAIL_PROVIDER` names. Close it when the process stops (it pools SMTP connections). */
export async function createEmailProvider(
  config: Pick<Config, 'emailProvider' | 'smtpUrl' | 'emailFrom'>,
  db: Db,
): Promise<EmailProvider> {
  if (config.emailProvider === 'simulator') return new SimulatorEmailProvider(db, config.emailFrom);
  // loadConfig refuses EMAIL_PROVIDER=smtp without SMTP_URL.
  const { SmtpEmailProvider } = await import('./smtp.ts');
  return new SmtpEmailProvider(db, config.smtpUrl!, config.emailFrom);
}
