import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Platform } from '../../platform/context.ts';
import { inTransaction } from '../../platform/db/transaction.ts';
import { errors } from '../../platform/http/errors.ts';
import { readUnsubscribeToken, type UnsubscribeKeys, unsubscribe } from './unsubscribe.ts';

const Params = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) });
const hidden = { hide: true, tags: ['sequences'] };

export function unsubscribeKeys(platform: Platform): UnsubscribeKeys {
  return { keys: platform.secrets.encryptionKey.derive('sequence-unsubscribe') };
}

/**
 * The one-click unsubscribe link of sequence emails, outside `/v1` and without a key (the token is the
 * credential). `POST` unsubscribes (RFC 8058: mail clients post `List-Unsubscribe=One-Click`); `GET`, a
 * person following the link from the email's text, shows a button that posts, so link scanners that fetch
 * every URL of a message unsubscribe nobody.
 */
export const unsubscribeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.platform;
  const keys = unsubscribeKeys(app.platform);
  // The body says only "List-Unsubscribe=One-Click"; the token in the path is all that counts.
  for (const type of ['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain'])
    app.addContentTypeParser(type, { parseAs: 'string' }, (_request, _body, done) => done(null, null));

  const read = (token: string) => {
    const named = readUnsubscribeToken(keys, token);
    if (!named) throw errors.notFound('Unsubscribe link');
    return named;
  };

  app.post('/unsubscribe/:token', { schema: { ...hidden, params: Params } }, async (request, reply) => {
    const { enrollmentId, step } = read(request.params.token);
    const done = await inTransaction(db, (trx) => unsubscribe(trx, enrollmentId, step));
    if (!done) throw errors.notFound('Unsubscribe link');
    return reply
      .type('text/html; charset=utf-8')
      .send(page('You are unsubscribed', 'You will receive no more of these emails.'));
  });

  app.get('/unsubscribe/:token', { schema: { ...hidden, params: Params } }, async (request, reply) => {
    read(request.params.token);
    return reply
      .type('text/html; charset=utf-8')
      .send(
        page(
          'Unsubscribe',
          '<form method="post"><button type="submit" name="List-Unsubscribe" value="One-Click">' +
            'Unsubscribe from these emails</button></form>',
        ),
      );
  });
};

function page(title: string, body: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1><p>${body}</p></body></html>`;
}
