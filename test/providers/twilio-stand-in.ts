import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import twilio from 'twilio';
import type RequestClient from 'twilio/lib/base/RequestClient.js';

/**
 * A local HTTP server that speaks the part of Twilio's REST API the SMS adapter uses:
 * `POST /2010-04-01/Accounts/{AccountSid}/Messages.json` with a form body and HTTP basic auth, answering
 * Twilio's Message JSON (201) or Twilio's error JSON (`{code, message, more_info, status}`). Like Twilio's
 * test credentials, it refuses its magic numbers with their real error codes.
 */

export const ACCOUNT_SID = `AC${'a1'.repeat(16)}`;
export const AUTH_TOKEN = '12345678901234567890123456789012';

/** Twilio's magic "To" numbers of its test credentials and the error each one gets. */
const MAGIC_TO: Record<string, { code: number; message: string }> = {
  '+15005550001': { code: 21211, message: "The 'To' number +15005550001 is not a valid phone number." },
  '+15005550002': { code: 21612, message: "The 'To' phone number is not currently reachable via SMS." },
  '+15005550003': { code: 21408, message: 'Permission to send an SMS has not been enabled for the region.' },
  '+15005550004': { code: 21610, message: 'Attempt to send to unsubscribed recipient' },
  '+15005550009': { code: 21614, message: "'To' number is not a valid mobile number" },
};

export interface ReceivedMessage {
  accountSid: string;
  authorization: string | undefined;
  contentType: string | undefined;
  /** The form body, each name with all its values. */
  form: Record<string, string[]>;
  sid: string;
}

/** An answer the next request gets instead of the normal one (an outage, a rate limit). */
export interface ScriptedReply {
  status: number;
  body: string;
}

export interface TwilioStandIn {
  url: string;
  messages: ReceivedMessage[];
  /** Every request, including refused ones. */
  requestCount(): number;
  /** The next request gets this reply, whatever it asks. */
  replyNext(reply: ScriptedReply): void;
  /** The SDK's HTTP client, pointed at this server instead of api.twilio.com. */
  httpClient(): twilio.RequestClient;
  close(): Promise<void>;
}

export async function startTwilioStandIn(): Promise<TwilioStandIn> {
  const messages: ReceivedMessage[] = [];
  const scripted: ScriptedReply[] = [];
  let requests = 0;

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests += 1;
      const reply = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
        res.end(typeof body === 'string' ? body : JSON.stringify(body));
      };
      const next = scripted.shift();
      if (next) return reply(next.status, next.body);

      const route = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages\.json$/.exec(req.url ?? '');
      if (req.method !== 'POST' || !route)
        return reply(404, twilioError(20404, 'The requested resource was not found', 404));
      const accountSid = route[1];
      if (req.headers.authorization !== basic(ACCOUNT_SID, AUTH_TOKEN) || accountSid !== ACCOUNT_SID)
        return reply(401, twilioError(20003, 'Authenticate', 401));

      const params = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const form: Record<string, string[]> = {};
      for (const name of new Set(params.keys())) form[name] = params.getAll(name);
      const field = (name: string) => form[name]?.[0] ?? null;
      const to = field('To');
      if (!to) return reply(400, twilioError(21604, "A 'To' phone number is required.", 400));
      if (!field('From') && !field('MessagingServiceSid'))
        return reply(
          400,
          twilioError(
            21603,
            "A 'From' or 'MessagingServiceSid' parameter is required to send a message.",
            400,
          ),
        );
      if (!field('Body') && !form.MediaUrl?.length)
        return reply(400, twilioError(21602, 'Message body is required.', 400));
      const magic = MAGIC_TO[to];
      if (magic) return reply(400, twilioError(magic.code, magic.message, 400));

      const sid = `SM${randomBytes(16).toString('hex')}`;
      messages.push({
        accountSid,
        authorization: req.headers.authorization,
        contentType: req.headers['content-type'],
        form,
        sid,
      });
      const now = new Date().toUTCString().replace('GMT', '+0000');
      const path = `/2010-04-01/Accounts/${accountSid}/Messages/${sid}`;
      reply(201, {
        account_sid: accountSid,
        api_version: '2010-04-01',
        body: field('Body') ?? '',
        date_created: now,
        date_sent: null,
        date_updated: now,
        direction: 'outbound-api',
        error_code: null,
        error_message: null,
        from: field('From'),
        messaging_service_sid: field('MessagingServiceSid'),
        num_media: String(form.MediaUrl?.length ?? 0),
        num_segments: '1',
        price: null,
        price_unit: 'USD',
        sid,
        // A message sent through a Messaging Service is `accepted` first; one from a number, `queued`.
        status: field('MessagingServiceSid') ? 'accepted' : 'queued',
        subresource_uris: { media: `${path}/Media.json` },
        to,
        uri: `${path}.json`,
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    messages,
    requestCount: () => requests,
    replyNext: (reply) => scripted.push(reply),
    httpClient: () => redirectedClient(url),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The SDK's own RequestClient (axios, form encoding, basic auth), sending to `baseUrl` instead of Twilio. */
export function redirectedClient(baseUrl: string): twilio.RequestClient {
  class RedirectedClient extends twilio.RequestClient {
    override request<T>(opts: RequestClient.RequestOptions<T>) {
      const target = new URL(opts.uri);
      return super.request<T>({ ...opts, uri: `${baseUrl}${target.pathname}${target.search}` });
    }
  }
  return new RedirectedClient();
}

export function twilioError(code: number, message: string, status: number) {
  return { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status };
}

function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

/**
 * A webhook exactly as Twilio sends it: form-encoded parameters, signed over the full URL it was configured
 * with. Use with `app.inject({method: 'POST', url: <path>, ...twilioWebhook(...)})`.
 */
export function twilioWebhook(
  url: string,
  params: Record<string, string>,
  authToken = AUTH_TOKEN,
): { headers: Record<string, string>; payload: string } {
  return {
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': twilio.getExpectedTwilioSignature(authToken, url, params),
    },
    payload: new URLSearchParams(params).toString(),
  };
}
