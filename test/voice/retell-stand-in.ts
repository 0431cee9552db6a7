import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export const API_KEY = 'key_3b6f0e5d8a1c4f2e9b7d';

/** Speaks Retell's create-phone-call (https://docs.retellai.com/api-references/create-phone-call). */
export async function retellStandIn() {
  const requests: Array<{ authorization: string | undefined; body: any }> = [];
  let answer: 'created' | 'rejected' | 'dropped' = 'created';
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => {
      raw += chunk;
    });
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v2/create-phone-call') {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"Not found"}');
        return;
      }
      const body = JSON.parse(raw);
      requests.push({ authorization: req.headers.authorization, body });
      if (answer === 'dropped') {
        req.socket.destroy();
        return;
      }
      if (answer === 'rejected') {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ status: 'error', message: 'to_number is not a valid phone number' }));
        return;
      }
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          call_type: 'phone_call',
          from_number: body.from_number,
          to_number: body.to_number,
          direction: 'outbound',
          call_id: `call_${requests.length}a2c4e6f8b0d2f4a6c8e0`,
          agent_id: 'oBeDLoLOeuAbiuaMFXRtDOLriTJ5tSxD',
          agent_version: 1,
          call_status: 'registered',
          metadata: body.metadata,
          retell_llm_dynamic_variables: body.retell_llm_dynamic_variables,
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    answer: (next: typeof answer) => {
      answer = next;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Signs as Retell does (https://docs.retellai.com/features/secure-webhook): `v=<ms>,d=<hex HMAC-SHA256 of body+ms>`, keyed by the API key. */
export function retellSignature(body: string, key = API_KEY, timestamp = Date.now()): string {
  return `v=${timestamp},d=${createHmac('sha256', key)
    .update(body + timestamp)
    .digest('hex')}`;
}
