import assert from 'node:assert/strict';
import { test } from 'node:test';
import { logSafeUrl } from './log-safe.ts';

test('query values that may be credentials are masked; the rest of the URL stays', () => {
  const key = `gc_live_${'a'.repeat(43)}`;
  assert.equal(logSafeUrl(`/v1/mcp?api_key=${key}`), '/v1/mcp?api_key=…');
  assert.equal(logSafeUrl('/v1/x?token=abc&limit=5'), '/v1/x?token=…&limit=5');
  assert.equal(logSafeUrl(`/v1/x?x=${key}&q=ok`), '/v1/x?x=gc_live_…&q=ok');
  assert.equal(logSafeUrl(`/v1/crm/contacts/${key}`), '/v1/crm/contacts/gc_live_…');
  assert.equal(logSafeUrl(`/v1/x?s=whsec_${'b'.repeat(40)}`), '/v1/x?s=whsec_…');
  assert.equal(logSafeUrl('/v1/crm/contacts?q=ada&limit=2'), '/v1/crm/contacts?q=ada&limit=2');
  assert.equal(logSafeUrl('/v1/me'), '/v1/me');
});

test('the token of a portal invitation or reset link is masked', () => {
  const token = 'A'.repeat(43);
  assert.equal(logSafeUrl(`/portal/invitations/${token}`), '/portal/invitations/…');
  assert.equal(logSafeUrl(`/portal/reset/${token}?x=1`), '/portal/reset/…?x=1');
  assert.equal(logSafeUrl('/portal/team'), '/portal/team');
});
