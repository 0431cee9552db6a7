import { KEY_PREFIX } from '../auth/keys.ts';

/**
 * What the service log may hold of a URL: the query values that could be credentials
 * are masked, and so is the token of a portal invitation or reset link (`/portal/invitations/…`). A client may put a key in the query (`/v1/mcp?api_key=…`) even though the API never
 * reads it there; the log must not keep it.
 */
const SENSITIVE_NAME = /key|token|secret|signature|sig|password|auth|credential/i;
/** Every API key prefix, and the webhook signing secret's (`whsec_`, owned by the webhooks module). */
const SECRET_SHAPE = new RegExp(`(${[...Object.values(KEY_PREFIX), 'whsec_'].join('|')})[A-Za-z0-9_-]+`, 'g');

/** The portal's links carry their token in the path: an invitation's and a password reset's. */
const TOKEN_PATH = /^(\/portal\/(?:invitations|reset)\/)[^/?#]+/;

export function logSafeUrl(given: string): string {
  const url = given.replace(TOKEN_PATH, '$1…');
  const at = url.indexOf('?');
  if (at === -1) return url.replace(SECRET_SHAPE, '$1…');
  const query = url
    .slice(at + 1)
    .split('&')
    .map((pair) => {
      const [name, ...rest] = pair.split('=');
      if (rest.length === 0) return pair;
      let decoded = name;
      try {
        decoded = decodeURIComponent(name);
      } catch {}
      return SENSITIVE_NAME.test(decoded) ? `${name}=…` : pair;
    })
    .join('&');
  return `${url.slice(0, at)}?${query}`.replace(SECRET_SHAPE, '$1…');
}
