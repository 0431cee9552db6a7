import type { FastifyPluginAsync } from 'fastify';
import { ApiError, errors } from '../../platform/http/errors.ts';
import { type LocalStorage, UploadRefusedError } from './local.ts';
import { UploadSignatureError } from './upload-signature.ts';

/**
 * `PUT /uploads/{key}?expires=…&size=…&type=…&signature=…`: where the local storage's upload URLs
 * point. Outside `/v1` and without an API key, like a presigned S3 URL: the signature is the permission. Registered only when
 * `STORAGE_PROVIDER=local`.
 */
export const localUploadRoutes: FastifyPluginAsync<{ storage: LocalStorage }> = async (app, { storage }) => {
  // The body is streamed to disk as it comes, whatever its type; no parser buffers it.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null));

  app.put<{ Params: { '*': string }; Querystring: Record<string, unknown> }>(
    '/uploads/*',
    { schema: { hide: true } },
    async (request, reply) => {
      let grant: ReturnType<LocalStorage['grantOf']>;
      try {
        grant = storage.grantOf(request.params['*'], request.query);
      } catch (error) {
        if (error instanceof UploadSignatureError) throw errors.forbidden(error.message);
        throw error;
      }
      const mediaType = (request.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
      if (mediaType !== grant.mimeType.toLowerCase())
        throw new ApiError(
          415,
          'unsupported_media_type',
          `This upload URL was issued for Content-Type ${grant.mimeType}, not ${mediaType || 'none'}.`,
        );
      const declared = Number(request.headers['content-length']);
      if (declared > grant.byteSize) throw payloadTooLarge(grant.byteSize);
      try {
        await storage.receive(grant, request.raw);
      } catch (error) {
        // The rest of the body is not read: the connection closes once the refusal is sent.
        if (error instanceof UploadRefusedError && error.reason === 'too_large')
          throw payloadTooLarge(grant.byteSize, { connection: 'close' });
        if (error instanceof UploadRefusedError) throw errors.invalidRequest(error.message);
        throw error;
      }
      return reply.code(200).send({ uploaded: true, byte_size: grant.byteSize });
    },
  );
};

function payloadTooLarge(byteSize: number, headers?: Record<string, string>): ApiError {
  return new ApiError(
    413,
    'payload_too_large',
    `The body is larger than the ${byteSize} bytes this upload URL was issued for.`,
    undefined,
    headers,
  );
}
