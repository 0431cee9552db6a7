/**
 * The email provider interface: what the sequences module calls to send one email, whichever way mail leaves
 * (`EMAIL_PROVIDER`). Every send is idempotent by its key, across retries and processes.
 */

export type EmailProviderName = 'simulator' | 'smtp';

export interface OutboundEmail {
  /**
   * The unique cause of this email, such as `enrollment:<enrollmentId>:step:<index>` (at most 500 characters).
   * A second send with the same key sends nothing and answers `sent: false`. The `Message-ID` is derived from it.
   */
  key: string;
  /** `Name <address>` or an address; `EMAIL_FROM` when absent. */
  from?: string;
  /** The recipient's address. */
  to: string;
  subject: string;
  text: string;
  html?: string;
  /**
   * Extra headers, passed through as given: `List-Unsubscribe: <https://…>` and
   * `List-Unsubscribe-Post: List-Unsubscribe=One-Click` for RFC 8058 one-click unsubscribe. The headers the
   * provider sets itself (From, To, Subject, Message-ID, Date…) cannot be given here.
   */
  headers?: Record<string, string>;
}

export interface EmailSendResult {
  /** `<hash-of-the-key@sender-domain>`: the same for every send of one key, so a repeat is recognisable downstream. */
  messageId: string;
  /** False when this key was sent before: nothing was sent now. */
  sent: boolean;
}

export interface EmailProvider {
  readonly name: EmailProviderName;
  /**
   * Sends one email, once per key. Throws `EmailRejectedError` when the server refused it for good (5xx: do
   * not retry; pause or record the failure), `EmailDeferredError` when it could not be sent now (4xx, network,
   * another process sending the same key at this moment: retry later). Neither records the key as sent.
   */
  send(email: OutboundEmail): Promise<EmailSendResult>;
  /** Closes pooled SMTP connections. */
  close(): Promise<void>;
}

export class EmailSendError extends Error {
  constructor(
    message: string,
    /** True for a refusal that a retry would meet again (SMTP 5xx). */
    readonly permanent: boolean,
    /** The SMTP reply code, when the server gave one. */
    readonly responseCode: number | null,
  ) {
    super(message);
  }
}

/** The server refused this email for good (SMTP 5xx): sending it again would be refused again. */
export class EmailRejectedError extends EmailSendError {
  constructor(message: string, responseCode: number | null) {
    super(message, true, responseCode);
  }
}

/** The email could not be sent now (SMTP 4xx, a network failure, a send in progress elsewhere): retry later. */
export class EmailDeferredError extends EmailSendError {
  constructor(message: string, responseCode: number | null) {
    super(message, false, responseCode);
  }
}
