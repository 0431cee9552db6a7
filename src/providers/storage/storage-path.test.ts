import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  keyFromStoragePath,
  newObjectKey,
  ownerPrefix,
  StoragePathError,
  safeFileName,
} from './storage-path.ts';

const scope = {
  orgId: '0190f5a2-0000-7000-8000-000000000001',
  clientId: '0190f5a2-0000-7000-8000-0000000000c1',
};
const otherOrg = '0190f5a2-0000-7000-8000-000000000002';
const otherClient = '0190f5a2-0000-7000-8000-0000000000c2';
const base = 's3://kb-bucket/';
const mine = `${base}${ownerPrefix(scope)}`;

describe('storage path check', () => {
  test('accepts a path of this bucket under the caller’s prefix and gives its key', () => {
    const key = keyFromStoragePath(`${mine}kb/1/0190-a/report.pdf`, base, scope);
    assert.equal(key, `orgs/${scope.orgId}/clients/${scope.clientId}/kb/1/0190-a/report.pdf`);
  });

  const hostile: [string, unknown, RegExp][] = [
    ['not a string', 42, /storage path returned/],
    ['null', null, /storage path returned/],
    ['empty', '', /storage path returned/],
    [
      'another bucket',
      `s3://other-bucket/orgs/${scope.orgId}/clients/${scope.clientId}/a.pdf`,
      /must start with/,
    ],
    [
      'a bucket name that extends ours',
      `s3://kb-bucket.evil.example/${ownerPrefix(scope)}a.pdf`,
      /must start with/,
    ],
    ['credentials in the host', `s3://user@kb-bucket/${ownerPrefix(scope)}a.pdf`, /must start with/],
    ['another scheme', `https://kb-bucket.s3.amazonaws.com/${ownerPrefix(scope)}a.pdf`, /must start with/],
    ['another storage', `local://${ownerPrefix(scope)}a.pdf`, /must start with/],
    ['upper-case scheme', `S3://kb-bucket/${ownerPrefix(scope)}a.pdf`, /must start with/],
    ['leading space', ` ${mine}a.pdf`, /must start with/],
    ['another org', `${base}orgs/${otherOrg}/clients/${scope.clientId}/a.pdf`, /must name an object under/],
    [
      'another client of the same org',
      `${base}orgs/${scope.orgId}/clients/${otherClient}/a.pdf`,
      /must name an object under/,
    ],
    [
      'an org id that only starts like ours',
      `${base}orgs/${scope.orgId}0/clients/${scope.clientId}/a.pdf`,
      /must name an object under/,
    ],
    ['no org prefix at all', `${base}a.pdf`, /must name an object under/],
    ['the prefix itself', mine.slice(0, -1), /must name an object under/],
    ['the prefix as a folder', mine, /not a folder/],
    ['a folder under it', `${mine}kb/`, /not a folder/],
    [
      'dot-dot traversal',
      `${mine}../../../orgs/${otherOrg}/clients/${otherClient}/a.pdf`,
      /must not contain \.\./,
    ],
    ['dot-dot inside a segment', `${mine}kb/..hidden`, /must not contain \.\./],
    ['dot segment', `${mine}./a.pdf`, /\. segments/],
    ['encoded dot-dot', `${mine}%2e%2e/%2e%2e/a.pdf`, /percent-encoding/],
    ['upper-case encoded dot-dot', `${mine}%2E%2E%2F%2E%2E%2Fa.pdf`, /percent-encoding/],
    ['encoded slash', `${mine}kb%2f..%2fa.pdf`, /percent-encoding/],
    ['double-encoded dot-dot', `${mine}%252e%252e/a.pdf`, /percent-encoding/],
    ['encoded NUL', `${mine}a.pdf%00.txt`, /percent-encoding/],
    ['backslash traversal', `${mine}..\\..\\a.pdf`, /backslashes/],
    ['backslash alone', `${mine}kb\\a.pdf`, /backslashes/],
    ['absolute path after the bucket', `${base}/${ownerPrefix(scope)}a.pdf`, /absolute path/],
    ['absolute file path', `${base}/etc/passwd`, /absolute path/],
    ['double slash', `${mine}kb//a.pdf`, /empty path segments/],
    ['NUL byte', `${mine}a.pdf\u0000.txt`, /control characters/],
    ['newline', `${mine}a\n.pdf`, /control characters/],
    ['DEL', `${mine}a\u007f.pdf`, /control characters/],
    ['full-width dots and solidus', `${mine}\uff0e\uff0e\uff0fa.pdf`, /may contain only/],
    ['one-dot leaders', `${mine}\u2024\u2024/a.pdf`, /may contain only/],
    ['a query string', `${mine}a.pdf?versionId=1`, /may contain only/],
    ['a fragment', `${mine}a.pdf#x`, /may contain only/],
    ['a space', `${mine}my file.pdf`, /may contain only/],
    ['far too long', `${mine}${'a'.repeat(1100)}`, /at most 1024/],
  ];

  for (const [name, input, message] of hostile) {
    test(`refuses ${name}`, () => {
      assert.throws(
        () => keyFromStoragePath(input, base, scope),
        (error: unknown) => error instanceof StoragePathError && message.test(error.message),
      );
    });
  }
});

describe('object keys for new uploads', () => {
  test('sit under the caller’s prefix with a fresh id and a safe file name', () => {
    const first = newObjectKey(scope, 'kb/7', 'Q3 Report (final).pdf');
    const second = newObjectKey(scope, 'kb/7', 'Q3 Report (final).pdf');
    assert.match(
      first,
      new RegExp(`^orgs/${scope.orgId}/clients/${scope.clientId}/kb/7/[0-9a-f-]{36}/Q3-Report-final\\.pdf$`),
    );
    assert.notEqual(first, second);
    assert.equal(keyFromStoragePath(`${base}${first}`, base, scope), first);
  });

  test('file names lose paths, traversal and exotic characters but keep their extension', () => {
    assert.equal(safeFileName('../../etc/passwd'), 'passwd');
    assert.equal(safeFileName('C:\\Users\\me\\..\\notes.txt'), 'notes.txt');
    assert.equal(safeFileName('...'), 'file');
    assert.equal(safeFileName('Ünïcödé naïve résumé.md'), 'Unicode-naive-resume.md');
    assert.equal(safeFileName('%2e%2e%2fsecret.pdf'), '2e-2e-2fsecret.pdf');
    assert.equal(safeFileName('a..b...c.pdf'), 'a.b.c.pdf');
    const long = safeFileName(`${'x'.repeat(300)}.pdf`);
    assert.equal(long.length, 120);
    assert.ok(long.endsWith('.pdf'));
  });

  test('an area that would escape the prefix is refused', () => {
    assert.throws(() => newObjectKey(scope, '../../other', 'a.pdf'), StoragePathError);
    assert.throws(() => newObjectKey(scope, '/abs', 'a.pdf'), StoragePathError);
  });
});
