import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** One message a receiver accepted: the SMTP envelope and the raw message as it came over DATA. */
export interface ReceivedMail {
  mailFrom: string;
  rcptTo: string[];
  raw: string;
  user: string | null;
}

/** What the server answers at one step of the dialogue: accept, or refuse with an SMTP reply code. */
export type Verdict = { accept: true } | { accept: false; code: number; message: string };

export interface SmtpReceiver {
  url: string;
  mail: ReceivedMail[];
  /** Decides the reply to RCPT TO (per recipient) and to the end of DATA; every step accepts by default. */
  rcptVerdict: (address: string) => Verdict;
  dataVerdict: () => Verdict;
  /** Delays the reply to DATA, to hold a send in flight. */
  dataDelayMs: number;
  close(): Promise<void>;
}

/** A real SMTP server (the `smtp-server` package) on 127.0.0.1, plain text, with optional AUTH. */
export async function startSmtpReceiver(
  options: { user?: string; password?: string } = {},
): Promise<SmtpReceiver> {
  const receiver: SmtpReceiver = {
    url: '',
    mail: [],
    rcptVerdict: () => ({ accept: true }),
    dataVerdict: () => ({ accept: true }),
    dataDelayMs: 0,
    close: async () => {},
  };
  const refusal = (verdict: Verdict) => {
    if (verdict.accept) return null;
    return Object.assign(new Error(verdict.message), { responseCode: verdict.code });
  };
  const server = new SMTPServer({
    logger: false,
    disabledCommands: options.user ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    authOptional: !options.user,
    allowInsecureAuth: true,
    onAuth(auth, _session, callback) {
      if (auth.username === options.user && auth.password === options.password)
        return callback(null, { user: auth.username });
      callback(Object.assign(new Error('Invalid credentials'), { responseCode: 535 }));
    },
    onRcptTo(address, _session, callback) {
      const error = refusal(receiver.rcptVerdict(address.address));
      callback(error ?? undefined);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        setTimeout(() => {
          const error = refusal(receiver.dataVerdict());
          if (!error) {
            receiver.mail.push({
              mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              rcptTo: session.envelope.rcptTo.map((rcpt) => rcpt.address),
              raw: Buffer.concat(chunks).toString('utf8'),
              user: (session.user as string | undefined) ?? null,
            });
          }
          callback(error);
        }, receiver.dataDelayMs);
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  const credentials = options.user ? `${options.user}:${options.password}@` : '';
  receiver.url = `smtp://${credentials}127.0.0.1:${port}`;
  receiver.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return receiver;
}

/** The value of a header in a raw message (unfolded), or null. */
export function header(raw: string, name: string): string | null {
  const head = raw.split(/\r\n\r\n/)[0].replace(/\r\n[ \t]+/g, ' ');
  const line = head.split('\r\n').find((text) => text.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  return line ? line.slice(name.length + 1).trim() : null;
}
