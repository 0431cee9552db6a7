import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * CSRF tokens of the portal's forms: an HMAC of the browser's `ap_csrf` cookie (random, HttpOnly)
 * and its session, so a token is good only in the browser and session it was rendered for. A page
 * on another site can neither read the cookie nor the token, so its form post is refused.
 */
export class CsrfTokens {
  constructor(private readonly keys: Buffer[]) {}

  static newBrowserSecret(): string {
    return randomBytes(24).toString('base64url');
  }

  token(browserSecret: string, sessionId: string | null): string {
    return this.sign(this.keys[0], browserSecret, sessionId);
  }

  verify(given: unknown, browserSecret: string | undefined, sessionId: string | null): boolean {
    if (typeof given !== 'string' || !browserSecret) return false;
    const presented = Buffer.from(given);
    return this.keys.some((key) => {
      const expected = Buffer.from(this.sign(key, browserSecret, sessionId));
      return expected.length === presented.length && timingSafeEqual(expected, presented);
    });
  }

  private sign(key: Buffer, browserSecret: string, sessionId: string | null): string {
    return createHmac('sha256', key)
      .update(browserSecret)
      .update('\0')
      .update(sessionId ?? '')
      .digest('base64url');
  }
}
