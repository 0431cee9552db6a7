import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** A response body serialized and encoded once, with its entity tag. */
export interface Representation {
  body: Buffer;
  etag: string;
  contentType: string;
}

export const JSON_TYPE = 'application/json; charset=utf-8';
export const HTML_TYPE = 'text/html; charset=utf-8';

export function etagOf(body: string | Buffer): string {
  return `"${createHash('sha1').update(body).digest('base64url')}"`;
}

export function represent(body: string, contentType = JSON_TYPE): Representation {
  const bytes = Buffer.from(body);
  return { body: bytes, etag: etagOf(bytes), contentType };
}

/**
 * Responses by request: the docs never change while the process runs, so a representation built
 * once (a search, say) is good until the process ends. Least recently used entries go first.
 */
export class RepresentationCache {
  private readonly entries = new Map<string, Representation>();

  constructor(private readonly capacity = 5000) {}

  get(key: string, build: () => Representation): Representation {
    const cached = this.entries.get(key);
    if (cached) {
      this.entries.delete(key);
      this.entries.set(key, cached);
      return cached;
    }
    const made = build();
    if (this.entries.size >= this.capacity) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, made);
    return made;
  }
}

/** True when `If-None-Match` names this tag (weak comparison, as RFC 9110 asks for this header). */
export function notModified(request: FastifyRequest, etag: string): boolean {
  const header = request.headers['if-none-match'];
  if (!header) return false;
  if (header.trim() === '*') return true;
  const bare = etag.replace(/^W\//, '');
  return header.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === bare);
}

/** Sends a representation, or 304 without a body when the client already holds it. */
export function sendRepresentation(
  request: FastifyRequest,
  reply: FastifyReply,
  representation: Representation,
): FastifyReply {
  reply.header('etag', representation.etag);
  if (notModified(request, representation.etag)) return reply.code(304).send();
  return reply.type(representation.contentType).send(representation.body);
}
