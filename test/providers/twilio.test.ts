import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import twilio from 'twilio';
import { freePort } from '../../src/platform/db/embedded.ts';
import {
  type OutboundSms,
  SmsProviderUnavailableError,
  SmsSignatureError,
  SmsWebhookError,
} from '../../src/providers/sms/index.ts';
import { TwilioSmsProvider } from '../../src/providers/sms/twilio.ts';
import {
  ACCOUNT_SID,
  AUTH_TOKEN,
  redirectedClient,
  startTwilioStandIn,
  type TwilioStandIn,
  twilioError,
  twilioWebhook,
} from './twilio-stand-in.ts';

const SERVICE_SID = `MG${'b2'.repeat(16)}`;
const PUBLIC = 'https://api.agency.test';
const FROM = '+14155550100';

function message(overrides: Partial<OutboundSms> = {}): OutboundSms {
  return {
    messageId: '01900000-0000-7000-8000-000000000001',
    from: FROM,
    to: '+14155550123',
    body: 'Hello from the platform',
    mediaUrls: [],
    statusCallbackUrl: `${PUBLIC}/hooks/twilio/status`,
    ...overrides,
  };
}

/** Twilio's signature, computed by hand as Twilio documents it: HMAC-SHA1 over the URL and the sorted parameters. */
function handSignature(authToken: string, url: string, params: Record<string, string>): string {
  const data = Object.keys(params)
    .sort()
    .reduce((text, name) => text + name + params[name], url);
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

describe('Twilio adapter: sending against a local stand-in of the REST API', () => {
  let standIn: TwilioStandIn;
  let provider: TwilioSmsProvider;

  before(async () => {
    standIn = await startTwilioStandIn();
    provider = new TwilioSmsProvider(
      { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, messagingServiceSid: null },
      { httpClient: standIn.httpClient() },
    );
  });
  after(() => standIn.close());

  it('creates the message with a form body, basic auth and the status callback naming the message id', async () => {
    const result = await provider.send(message());
    const received = standIn.messages.at(-1)!;
    assert.deepEqual(result, { outcome: 'accepted', providerMessageId: received.sid, status: 'sending' });
    assert.match(received.sid, /^SM[0-9a-f]{32}$/);
    assert.equal(received.accountSid, ACCOUNT_SID);
    assert.equal(
      received.authorization,
      `Basic ${Buffer.from(`${ACCOUNT_SID}:${AUTH_TOKEN}`).toString('base64')}`,
    );
    assert.equal(received.contentType, 'application/x-www-form-urlencoded');
    assert.deepEqual(received.form, {
      To: ['+14155550123'],
      From: [FROM],
      Body: ['Hello from the platform'],
      StatusCallback: [`${PUBLIC}/hooks/twilio/status?message_id=01900000-0000-7000-8000-000000000001`],
      SmartEncoded: ['false'],
    });
  });

  it('sends media URLs as repeated MediaUrl fields, and through the Messaging Service when one is set', async () => {
    const viaService = new TwilioSmsProvider(
      { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, messagingServiceSid: SERVICE_SID },
      { httpClient: standIn.httpClient() },
    );
    const media = ['https://cdn.agency.test/a.png', 'https://cdn.agency.test/b.jpg'];
    const result = await viaService.send(message({ mediaUrls: media, statusCallbackUrl: null }));
    assert.equal(result.outcome, 'accepted');
    const { form } = standIn.messages.at(-1)!;
    assert.deepEqual(form.MediaUrl, media);
    assert.deepEqual(form.MessagingServiceSid, [SERVICE_SID]);
    assert.deepEqual(form.From, [FROM]);
    assert.equal(form.StatusCallback, undefined);
  });

  it("maps Twilio's refusals to the platform's error codes, as failed results", async () => {
    const cases: [string, string, string][] = [
      ['+15005550001', 'invalid_number', '21211'],
      ['+15005550002', 'unreachable', '21612'],
      ['+15005550003', 'sender_not_allowed', '21408'],
      ['+15005550004', 'opted_out', '21610'],
      ['+15005550009', 'invalid_number', '21614'],
    ];
    for (const [to, errorCode, providerErrorCode] of cases) {
      const result = await provider.send(message({ to }));
      assert.equal(result.outcome, 'failed', to);
      assert.equal(result.outcome === 'failed' && result.errorCode, errorCode, to);
      assert.equal(result.outcome === 'failed' && result.providerErrorCode, providerErrorCode, to);
      assert.equal(result.providerMessageId, null);
    }
  });

  it('reads errors in the RFC 9457 shape too', async () => {
    standIn.replyNext({
      status: 400,
      body: JSON.stringify({
        type: 'https://www.twilio.com/docs/errors/21610',
        title: 'Unsubscribed',
        status: 400,
        code: 21610,
      }),
    });
    const result = await provider.send(message());
    assert.equal(result.outcome === 'failed' && result.errorCode, 'opted_out');
  });

  it('throws SmsProviderUnavailableError when Twilio is rate-limiting, failing or refusing the credentials', async () => {
    const cases: [number, unknown, boolean][] = [
      [429, twilioError(20429, 'Too Many Requests', 429), false],
      [401, twilioError(20003, 'Authenticate', 401), false],
      [500, twilioError(20500, 'Internal Server Error', 500), true],
      [503, 'Service Unavailable', true],
    ];
    for (const [status, body, mayHaveBeenSent] of cases) {
      standIn.replyNext({ status, body: typeof body === 'string' ? body : JSON.stringify(body) });
      await assert.rejects(provider.send(message()), (error: unknown) => {
        assert.ok(error instanceof SmsProviderUnavailableError, String(error));
        assert.equal(error.httpStatus, status);
        assert.equal(error.mayHaveBeenSent, mayHaveBeenSent, `HTTP ${status}`);
        return true;
      });
    }
  });

  it('refuses wrong credentials as the real API does', async () => {
    const wrong = new TwilioSmsProvider(
      { accountSid: ACCOUNT_SID, authToken: 'not-the-token', messagingServiceSid: null },
      { httpClient: standIn.httpClient() },
    );
    const before = standIn.messages.length;
    await assert.rejects(wrong.send(message()), (error: unknown) => {
      assert.ok(error instanceof SmsProviderUnavailableError);
      return error.httpStatus === 401 && !error.mayHaveBeenSent;
    });
    assert.equal(standIn.messages.length, before);
  });

  it('knows a refused connection did not send anything', async () => {
    const closed = new TwilioSmsProvider(
      { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, messagingServiceSid: null },
      { httpClient: redirectedClient(`http://127.0.0.1:${await freePort()}`) },
    );
    await assert.rejects(closed.send(message()), (error: unknown) => {
      assert.ok(error instanceof SmsProviderUnavailableError, String(error));
      return error.httpStatus === null && error.mayHaveBeenSent === false;
    });
  });
});

describe('Twilio adapter: webhooks signed as Twilio signs them', () => {
  const provider = new TwilioSmsProvider({
    accountSid: ACCOUNT_SID,
    authToken: AUTH_TOKEN,
    messagingServiceSid: null,
  });
  const inboundUrl = `${PUBLIC}/hooks/twilio/sms`;
  const inbound = {
    ToCountry: 'US',
    ToState: 'CA',
    SmsMessageSid: 'SM0123456789abcdef0123456789abcdef',
    NumMedia: '2',
    ToCity: 'SAN FRANCISCO',
    FromZip: '94105',
    SmsSid: 'SM0123456789abcdef0123456789abcdef',
    FromState: 'CA',
    SmsStatus: 'received',
    FromCity: 'SAN FRANCISCO',
    Body: 'Yes, Tuesday works 👍',
    FromCountry: 'US',
    To: FROM,
    MessagingServiceSid: SERVICE_SID,
    ToZip: '94105',
    NumSegments: '1',
    MessageSid: 'SM0123456789abcdef0123456789abcdef',
    AccountSid: ACCOUNT_SID,
    From: '+14155550123',
    MediaUrl0: 'https://api.twilio.com/2010-04-01/Accounts/AC/Messages/MM/Media/ME1',
    MediaContentType0: 'image/jpeg',
    MediaUrl1: 'https://api.twilio.com/2010-04-01/Accounts/AC/Messages/MM/Media/ME2',
    MediaContentType1: 'image/png',
    ApiVersion: '2010-04-01',
  };

  it('computes signatures by hand exactly as Twilio documents them', () => {
    // The example of Twilio's webhook security guide.
    const params = {
      CallSid: 'CA1234567890ABCDE',
      Caller: '+14158675310',
      Digits: '1234',
      From: '+14158675310',
      To: '+18005551212',
    };
    assert.equal(
      handSignature('12345', 'https://mycompany.com/myapp.php?foo=1&bar=2', params),
      'GvWf1cFY/Q7PnoempGyD5oXAezc=',
    );
  });

  it('reads an inbound message signed by hand over the public URL', () => {
    const parsed = provider.parseInbound({
      url: inboundUrl,
      headers: { 'x-twilio-signature': handSignature(AUTH_TOKEN, inboundUrl, inbound) },
      body: new URLSearchParams(inbound).toString(),
    });
    assert.equal(parsed.providerMessageId, inbound.MessageSid);
    assert.equal(parsed.from, '+14155550123');
    assert.equal(parsed.to, FROM);
    assert.equal(parsed.body, 'Yes, Tuesday works 👍');
    assert.deepEqual(parsed.mediaUrls, [inbound.MediaUrl0, inbound.MediaUrl1]);
    assert.ok(Math.abs(Date.parse(parsed.receivedAt) - Date.now()) < 5_000);
  });

  it('reads an inbound message signed by the SDK', () => {
    const signed = twilioWebhook(inboundUrl, inbound);
    const parsed = provider.parseInbound({ url: inboundUrl, headers: signed.headers, body: signed.payload });
    assert.equal(parsed.providerMessageId, inbound.MessageSid);
  });

  it('refuses a signature made for another URL, scheme, query or token', () => {
    const body = new URLSearchParams(inbound).toString();
    const signedFor = [
      handSignature(AUTH_TOKEN, 'http://api.agency.test/hooks/twilio/sms', inbound),
      handSignature(AUTH_TOKEN, 'https://other.agency.test/hooks/twilio/sms', inbound),
      handSignature(AUTH_TOKEN, `${PUBLIC}/hooks/twilio/status`, inbound),
      handSignature(AUTH_TOKEN, `${inboundUrl}?x=1`, inbound),
      handSignature('another-auth-token', inboundUrl, inbound),
      handSignature(AUTH_TOKEN, inboundUrl, { ...inbound, Body: 'something else' }),
    ];
    for (const signature of signedFor) {
      assert.throws(
        () => provider.parseInbound({ url: inboundUrl, headers: { 'x-twilio-signature': signature }, body }),
        (error: unknown) => error instanceof SmsSignatureError && error.reason === 'invalid',
      );
    }
  });

  it('refuses a forged signature and a missing one as distinct reasons', () => {
    const body = new URLSearchParams(inbound).toString();
    assert.throws(
      () =>
        provider.parseInbound({
          url: inboundUrl,
          headers: { 'x-twilio-signature': 'Zm9yZ2VkIHNpZ25hdHVyZQ==' },
          body,
        }),
      (error: unknown) => error instanceof SmsSignatureError && error.reason === 'invalid',
    );
    assert.throws(
      () => provider.parseInbound({ url: inboundUrl, headers: {}, body }),
      (error: unknown) => error instanceof SmsSignatureError && error.reason === 'missing',
    );
    assert.throws(
      () =>
        provider.parseStatus({
          url: `${PUBLIC}/hooks/twilio/status`,
          headers: { 'x-twilio-signature': '' },
          body,
        }),
      (error: unknown) => error instanceof SmsSignatureError && error.reason === 'missing',
    );
  });

  it('refuses a signed request without the fields of a message as a bad webhook, not a bad signature', () => {
    const params = { AccountSid: ACCOUNT_SID, Body: 'hi' };
    const signed = twilioWebhook(inboundUrl, params);
    assert.throws(
      () => provider.parseInbound({ url: inboundUrl, headers: signed.headers, body: signed.payload }),
      (error: unknown) => error instanceof SmsWebhookError && !(error instanceof SmsSignatureError),
    );
  });

  it('reads a delivery report, with the platform message id from the signed callback URL', () => {
    const url = `${PUBLIC}/hooks/twilio/status?message_id=01900000-0000-7000-8000-000000000001`;
    const params = {
      SmsSid: 'SM0123456789abcdef0123456789abcdef',
      SmsStatus: 'delivered',
      MessageStatus: 'delivered',
      To: '+14155550123',
      MessageSid: 'SM0123456789abcdef0123456789abcdef',
      AccountSid: ACCOUNT_SID,
      From: FROM,
      ApiVersion: '2010-04-01',
    };
    const update = provider.parseStatus({
      url,
      headers: { 'x-twilio-signature': handSignature(AUTH_TOKEN, url, params) },
      body: new URLSearchParams(params).toString(),
    });
    assert.equal(update.messageId, '01900000-0000-7000-8000-000000000001');
    assert.equal(update.providerMessageId, params.MessageSid);
    assert.equal(update.status, 'delivered');
    assert.equal(update.errorCode, null);
    assert.equal(update.providerErrorCode, null);
    // The signature covers the query: another message id is refused.
    assert.throws(
      () =>
        provider.parseStatus({
          url: url.replace('0001', '0002'),
          headers: { 'x-twilio-signature': handSignature(AUTH_TOKEN, url, params) },
          body: new URLSearchParams(params).toString(),
        }),
      SmsSignatureError,
    );
  });

  it('maps failed and undelivered reports with their error codes, and every Twilio status', () => {
    const url = `${PUBLIC}/hooks/twilio/status?message_id=m1`;
    const report = (MessageStatus: string, ErrorCode?: string) => {
      const params: Record<string, string> = { MessageSid: 'SMx', MessageStatus, AccountSid: ACCOUNT_SID };
      if (ErrorCode) params.ErrorCode = ErrorCode;
      const signed = twilioWebhook(url, params);
      return provider.parseStatus({ url, headers: signed.headers, body: signed.payload });
    };
    const carrierCases: [string, string][] = [
      ['30003', 'unreachable'],
      ['30005', 'unreachable'],
      ['30006', 'unreachable'],
      ['30007', 'carrier_rejected'],
      ['30004', 'carrier_rejected'],
      ['30034', 'sender_not_allowed'],
      ['30999', 'carrier_rejected'],
      ['21610', 'opted_out'],
      ['12345', 'provider_error'],
    ];
    for (const [code, errorCode] of carrierCases) {
      const update = report('undelivered', code);
      assert.equal(update.status, 'undelivered');
      assert.equal(update.errorCode, errorCode, code);
      assert.equal(update.providerErrorCode, code);
    }
    assert.equal(report('failed').errorCode, 'provider_error');
    const statuses: [string, string][] = [
      ['accepted', 'sending'],
      ['queued', 'sending'],
      ['sending', 'sending'],
      ['sent', 'sent'],
      ['delivered', 'delivered'],
      ['read', 'delivered'],
      ['failed', 'failed'],
      ['canceled', 'failed'],
    ];
    for (const [twilioStatus, status] of statuses)
      assert.equal(report(twilioStatus).status, status, twilioStatus);
    assert.equal(report('sent', '30007').errorCode, null);
    assert.throws(() => report('received'), SmsWebhookError);
  });

  it('is the signature check of the SDK itself', () => {
    const params = { MessageSid: 'SMx', MessageStatus: 'sent' };
    const url = `${PUBLIC}/hooks/twilio/status`;
    assert.equal(
      twilio.getExpectedTwilioSignature(AUTH_TOKEN, url, params),
      handSignature(AUTH_TOKEN, url, params),
    );
  });
});
