import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { DecryptionError, Keyring, open, seal, sealedUnderCurrent } from './crypto.ts';

describe('secrets at rest (AES-256-GCM)', () => {
  const key = new Keyring([randomBytes(32)]);

  test('round-trips, with a fresh IV each time', () => {
    const a = seal(key, 'whsec_abc', 'row-1');
    const b = seal(key, 'whsec_abc', 'row-1');
    assert.notDeepEqual(a, b);
    assert.ok(!a.includes(Buffer.from('whsec_abc')));
    assert.equal(open(key, a, 'row-1'), 'whsec_abc');
  });

  test('refuses another record, another key or an altered ciphertext', () => {
    const sealed = seal(key, 'whsec_abc', 'row-1');
    assert.throws(() => open(key, sealed, 'row-2'), DecryptionError);
    assert.throws(() => open(new Keyring([randomBytes(32)]), sealed, 'row-1'), DecryptionError);
    const altered = Buffer.from(sealed);
    altered[altered.length - 1] ^= 1;
    assert.throws(() => open(key, altered, 'row-1'), DecryptionError);
    assert.throws(() => open(key, Buffer.from([9, 1, 2]), 'row-1'), DecryptionError);
  });

  test('rotation: the first key seals, every key opens; a value under an old key says so', () => {
    const old = key;
    const sealedUnderOld = seal(old, 'whsec_old', 'row-1');
    const rotated = new Keyring([randomBytes(32), ...old.keys]);
    assert.equal(open(rotated, sealedUnderOld, 'row-1'), 'whsec_old');
    assert.equal(sealedUnderCurrent(rotated, sealedUnderOld, 'row-1'), false);
    const resealed = seal(rotated, 'whsec_old', 'row-1');
    assert.equal(sealedUnderCurrent(rotated, resealed, 'row-1'), true);
    assert.throws(() => open(old, resealed, 'row-1'), DecryptionError);
    assert.equal(open(new Keyring([rotated.current]), resealed, 'row-1'), 'whsec_old');
  });
});
