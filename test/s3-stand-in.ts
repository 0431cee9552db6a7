import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for S3 that speaks its wire format for path-style PUT, GET and DELETE object, and checks
 * every request's AWS Signature Version 4 the way S3 does (header-signed or presigned query, expiry,
 * payload hash), with its own implementation rather than the SDK's, so a wrongly signed or wrongly
 * addressed request fails here as it would against S3. Objects live in memory.
 */

export interface StoredObject {
  body: Buffer;
  contentType: string;
}

export interface S3StandIn {
  endpoint: string;
  bucket: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  region: string;
  objects: Map<string, StoredObject>;
  /** Method and path of every request, and how it was authenticated. */
  requests: { method: string; path: string; auth: 'presigned' | 'header' | 'none'; status: number }[];
  close(): Promise<void>;
}

export async function startS3StandIn(bucket = 'kb-test'): Promise<S3StandIn> {
  const credentials = { accessKeyId: 'AKIASTANDIN00000000', secretAccessKey: 'stand-in-secret-key' };
  const region = 'us-east-1';
  const objects = new Map<string, StoredObject>();
  const requests: S3StandIn['requests'] = [];

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const auth = url.searchParams.has('X-Amz-Signature')
      ? 'presigned'
      : req.headers.authorization
        ? 'header'
        : 'none';
    const answer = (
      status: number,
      headers: Record<string, string | number> = {},
      payload: Buffer | string = '',
    ) => {
      requests.push({ method: req.method ?? '', path: url.pathname, auth, status });
      res.writeHead(status, headers).end(payload);
    };
    const fail = (status: number, code: string, message: string) =>
      answer(
        status,
        { 'content-type': 'application/xml' },
        `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`,
      );

    const refusal = verifySignature(req, url, body, credentials, region);
    if (refusal) return fail(403, refusal.code, refusal.message);

    const [, bucketName, ...keyParts] = url.pathname.split('/');
    if (bucketName !== bucket) return fail(404, 'NoSuchBucket', 'The specified bucket does not exist');
    const key = decodeURIComponent(keyParts.join('/'));
    if (!key) return fail(400, 'InvalidRequest', 'Only object requests are supported here');

    if (req.method === 'PUT') {
      const declared = req.headers['content-length'];
      if (declared !== undefined && Number(declared) !== body.length)
        return fail(400, 'IncompleteBody', 'The request body is shorter or longer than Content-Length');
      objects.set(key, { body, contentType: req.headers['content-type'] ?? 'binary/octet-stream' });
      return answer(200, { etag: `"${createHash('md5').update(body).digest('hex')}"` });
    }
    if (req.method === 'GET') {
      const object = objects.get(key);
      if (!object) return fail(404, 'NoSuchKey', 'The specified key does not exist.');
      return answer(
        200,
        {
          'content-type': object.contentType,
          'content-length': object.body.length,
          etag: `"${createHash('md5').update(object.body).digest('hex')}"`,
          'last-modified': new Date().toUTCString(),
        },
        object.body,
      );
    }
    if (req.method === 'DELETE') {
      objects.delete(key);
      return answer(204);
    }
    return fail(405, 'MethodNotAllowed', 'The specified method is not allowed against this resource.');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    credentials,
    region,
    objects,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

interface Refusal {
  code: string;
  message: string;
}

/** SigV4 as S3 checks it: https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-authenticating-requests.html */
function verifySignature(
  req: http.IncomingMessage,
  url: URL,
  body: Buffer,
  credentials: { accessKeyId: string; secretAccessKey: string },
  region: string,
): Refusal | null {
  const query = url.searchParams;
  let credential: string;
  let signedHeaders: string;
  let signature: string;
  let amzDate: string;
  let payloadHash: string;
  if (query.has('X-Amz-Signature')) {
    if (query.get('X-Amz-Algorithm') !== 'AWS4-HMAC-SHA256')
      return {
        code: 'AuthorizationQueryParametersError',
        message: 'X-Amz-Algorithm must be AWS4-HMAC-SHA256',
      };
    credential = query.get('X-Amz-Credential') ?? '';
    signedHeaders = query.get('X-Amz-SignedHeaders') ?? '';
    signature = query.get('X-Amz-Signature') ?? '';
    amzDate = query.get('X-Amz-Date') ?? '';
    const expires = Number(query.get('X-Amz-Expires'));
    if (!Number.isInteger(expires) || expires < 1 || expires > 604_800)
      return { code: 'AuthorizationQueryParametersError', message: 'X-Amz-Expires must be 1 to 604800' };
    if (Date.now() > parseAmzDate(amzDate) + expires * 1000)
      return { code: 'AccessDenied', message: 'Request has expired' };
    payloadHash = query.get('X-Amz-Content-Sha256') ?? 'UNSIGNED-PAYLOAD';
  } else {
    const match =
      /^AWS4-HMAC-SHA256 Credential=([^,]+), ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(
        req.headers.authorization ?? '',
      );
    if (!match) return { code: 'AccessDenied', message: 'Access Denied' };
    [, credential, signedHeaders, signature] = match;
    amzDate = String(req.headers['x-amz-date'] ?? '');
    payloadHash = String(req.headers['x-amz-content-sha256'] ?? '');
    if (!payloadHash) return { code: 'InvalidRequest', message: 'Missing x-amz-content-sha256' };
    if (Math.abs(Date.now() - parseAmzDate(amzDate)) > 15 * 60_000)
      return {
        code: 'RequestTimeTooSkewed',
        message: 'The difference between the request time and the current time is too large.',
      };
  }
  if (payloadHash !== 'UNSIGNED-PAYLOAD' && payloadHash !== createHash('sha256').update(body).digest('hex'))
    return {
      code: 'XAmzContentSHA256Mismatch',
      message: 'The provided x-amz-content-sha256 header does not match what was computed.',
    };

  const [accessKeyId, date, scopeRegion, service, terminator] = credential.split('/');
  if (accessKeyId !== credentials.accessKeyId)
    return {
      code: 'InvalidAccessKeyId',
      message: 'The AWS Access Key Id you provided does not exist in our records.',
    };
  if (
    scopeRegion !== region ||
    service !== 's3' ||
    terminator !== 'aws4_request' ||
    date !== amzDate.slice(0, 8)
  )
    return {
      code: 'AuthorizationHeaderMalformed',
      message: 'The authorization header is malformed; the scope is wrong.',
    };

  const headerNames = signedHeaders.split(';');
  if (!headerNames.includes('host')) return { code: 'AccessDenied', message: 'host must be a signed header' };
  const canonicalHeaders = headerNames
    .map(
      (name) =>
        `${name}:${String(req.headers[name] ?? '')
          .trim()
          .replace(/\s+/g, ' ')}\n`,
    )
    .join('');
  const canonicalQuery = [...query.entries()]
    .filter(([name]) => name !== 'X-Amz-Signature')
    .map(([name, value]) => [rfc3986(name), rfc3986(value)])
    .sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
  const canonicalRequest = [
    req.method,
    url.pathname,
    canonicalQuery,
    canonicalHeaders,
    signedHeaders,
    payloadHash,
  ].join('\n');
  const scope = `${date}/${scopeRegion}/s3/aws4_request`;
  const stringToSign = [
    'AWS4-HMAC-SHA256',
    amzDate,
    scope,
    createHash('sha256').update(canonicalRequest).digest('hex'),
  ].join('\n');
  let signingKey: Buffer = hmac(`AWS4${credentials.secretAccessKey}`, date);
  for (const part of [scopeRegion, 's3', 'aws4_request']) signingKey = hmac(signingKey, part);
  const expected = createHmac('sha256', signingKey).update(stringToSign).digest();
  const given = Buffer.from(signature, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return {
      code: 'SignatureDoesNotMatch',
      message: 'The request signature we calculated does not match the signature you provided.',
    };
  return null;
}

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac('sha256', key).update(data).digest();
}

function rfc3986(value: string): string {
  return encodeURIComponent(value).replace(
    /[!'()*]/g,
    (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

function parseAmzDate(value: string): number {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (!match) return Number.NaN;
  const [, year, month, day, hour, minute, second] = match.map(Number);
  return Date.UTC(year, month - 1, day, hour, minute, second);
}
