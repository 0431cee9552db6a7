import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { countSegments } from './segments.ts';

/** GSM 03.38 default alphabet as Unicode code points, position by position (0x1B, the escape, left out). */
const GSM_BASIC_CODE_POINTS = [
  0x40,
  0xa3,
  0x24,
  0xa5,
  0xe8,
  0xe9,
  0xf9,
  0xec,
  0xf2,
  0xc7,
  0x0a,
  0xd8,
  0xf8,
  0x0d,
  0xc5,
  0xe5,
  0x394,
  0x5f,
  0x3a6,
  0x393,
  0x39b,
  0x3a9,
  0x3a0,
  0x3a8,
  0x3a3,
  0x398,
  0x39e,
  0xc6,
  0xe6,
  0xdf,
  0xc9,
  0x20,
  0x21,
  0x22,
  0x23,
  0xa4,
  ...range(0x25, 0x3f),
  0xa1,
  ...range(0x41, 0x5a),
  0xc4,
  0xd6,
  0xd1,
  0xdc,
  0xa7,
  0xbf,
  ...range(0x61, 0x7a),
  0xe4,
  0xf6,
  0xf1,
  0xfc,
  0xe0,
];
const GSM_EXTENSION_CODE_POINTS = [0x0c, 0x5e, 0x7b, 0x7d, 0x5c, 0x5b, 0x7e, 0x5d, 0x7c, 0x20ac];

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

const a = (n: number) => 'a'.repeat(n);
const EURO = '€';
const C_CEDILLA = 'ç'; // lower-case ç is not in the GSM alphabet (only Ç is)
const GRIN = '😀'; // U+1F600: a surrogate pair, two UTF-16 code units

describe('countSegments: GSM-7', () => {
  it('knows the 127 characters of the basic table, each one septet', () => {
    assert.equal(GSM_BASIC_CODE_POINTS.length, 127);
    const body = String.fromCodePoint(...GSM_BASIC_CODE_POINTS);
    assert.deepEqual(countSegments(body), { segments: 1, encoding: 'GSM-7' });
    // 127 + 33 = 160 septets still fit one segment; one more does not.
    assert.deepEqual(countSegments(body + a(33)), { segments: 1, encoding: 'GSM-7' });
    assert.deepEqual(countSegments(body + a(34)), { segments: 2, encoding: 'GSM-7' });
  });

  it('knows the extension table, each character two septets', () => {
    for (const codePoint of GSM_EXTENSION_CODE_POINTS) {
      const char = String.fromCodePoint(codePoint);
      assert.deepEqual(countSegments(char.repeat(80)), { segments: 1, encoding: 'GSM-7' }, `U+${codePoint}`);
      assert.deepEqual(countSegments(char.repeat(80) + 'a'), { segments: 2, encoding: 'GSM-7' });
    }
  });

  it('fits 160 septets alone and 153 per part', () => {
    assert.deepEqual(countSegments(''), { segments: 1, encoding: 'GSM-7' });
    assert.deepEqual(countSegments(a(1)), { segments: 1, encoding: 'GSM-7' });
    assert.deepEqual(countSegments(a(160)), { segments: 1, encoding: 'GSM-7' });
    assert.deepEqual(countSegments(a(161)), { segments: 2, encoding: 'GSM-7' });
    assert.deepEqual(countSegments(a(306)), { segments: 2, encoding: 'GSM-7' });
    assert.deepEqual(countSegments(a(307)), { segments: 3, encoding: 'GSM-7' });
    assert.deepEqual(countSegments(a(459)), { segments: 3, encoding: 'GSM-7' });
    assert.deepEqual(countSegments(a(460)), { segments: 4, encoding: 'GSM-7' });
  });

  it('counts a 1,600-character body (the API maximum) as 11 parts', () => {
    assert.deepEqual(countSegments(a(1600)), { segments: 11, encoding: 'GSM-7' });
  });

  it('counts an extension character double against the single-segment limit', () => {
    assert.deepEqual(countSegments(a(158) + EURO), { segments: 1, encoding: 'GSM-7' });
    assert.deepEqual(countSegments(a(159) + EURO), { segments: 2, encoding: 'GSM-7' });
    assert.deepEqual(countSegments(`${a(150)}[${a(8)}`), { segments: 1, encoding: 'GSM-7' });
    assert.deepEqual(countSegments(`${a(150)}[${a(9)}`), { segments: 2, encoding: 'GSM-7' });
  });

  it('never splits an escape and its character across parts', () => {
    // 152 + 2 + 152 = 306 septets would fill two parts of 153 exactly, but the € cannot sit across them:
    // it moves whole to the second part, which then overflows into a third.
    assert.deepEqual(countSegments(a(152) + EURO + a(152)), { segments: 3, encoding: 'GSM-7' });
    // 76 € fill 152 septets of the first part; the 77th does not fit the remaining one.
    assert.deepEqual(countSegments(EURO.repeat(153)), { segments: 3, encoding: 'GSM-7' });
    assert.deepEqual(countSegments(a(151) + EURO + a(153)), { segments: 2, encoding: 'GSM-7' });
  });

  it('treats line breaks as one septet each', () => {
    assert.deepEqual(countSegments('\r\n'.repeat(80)), { segments: 1, encoding: 'GSM-7' });
    assert.deepEqual(countSegments(`${'\r\n'.repeat(80)}a`), { segments: 2, encoding: 'GSM-7' });
  });
});

describe('countSegments: UCS-2', () => {
  it('switches the whole body to UCS-2 for one character outside the GSM tables', () => {
    assert.deepEqual(countSegments(a(60)), { segments: 1, encoding: 'GSM-7' });
    assert.deepEqual(countSegments(a(60) + C_CEDILLA), { segments: 1, encoding: 'UCS-2' });
    assert.deepEqual(countSegments(a(100)), { segments: 1, encoding: 'GSM-7' });
    assert.deepEqual(countSegments(a(100) + C_CEDILLA), { segments: 2, encoding: 'UCS-2' });
  });

  it('fits 70 code units alone and 67 per part', () => {
    assert.deepEqual(countSegments(C_CEDILLA.repeat(70)), { segments: 1, encoding: 'UCS-2' });
    assert.deepEqual(countSegments(C_CEDILLA.repeat(71)), { segments: 2, encoding: 'UCS-2' });
    assert.deepEqual(countSegments(C_CEDILLA.repeat(134)), { segments: 2, encoding: 'UCS-2' });
    assert.deepEqual(countSegments(C_CEDILLA.repeat(135)), { segments: 3, encoding: 'UCS-2' });
    assert.deepEqual(countSegments(C_CEDILLA.repeat(1600)), { segments: 24, encoding: 'UCS-2' });
  });

  it('counts characters outside the Basic Multilingual Plane as two code units', () => {
    assert.deepEqual(countSegments(GRIN), { segments: 1, encoding: 'UCS-2' });
    assert.deepEqual(countSegments(GRIN.repeat(35)), { segments: 1, encoding: 'UCS-2' });
    assert.deepEqual(countSegments(GRIN.repeat(36)), { segments: 2, encoding: 'UCS-2' });
    assert.deepEqual(countSegments(a(68) + GRIN), { segments: 1, encoding: 'UCS-2' });
    assert.deepEqual(countSegments(a(69) + GRIN), { segments: 2, encoding: 'UCS-2' });
  });

  it('never splits a surrogate pair across parts', () => {
    // 66 + 2 + 66 = 134 code units would fill two parts of 67 exactly, but the pair moves whole to part two.
    assert.deepEqual(countSegments(a(66) + GRIN + a(66)), { segments: 3, encoding: 'UCS-2' });
    assert.deepEqual(countSegments(a(65) + GRIN + a(67)), { segments: 2, encoding: 'UCS-2' });
    // 33 pairs fill 66 units of each part: 67 pairs need three parts, not the two their 134 units suggest.
    assert.deepEqual(countSegments(GRIN.repeat(67)), { segments: 3, encoding: 'UCS-2' });
  });

  it('counts extension characters as one code unit once the body is UCS-2', () => {
    assert.deepEqual(countSegments(EURO.repeat(69) + C_CEDILLA), { segments: 1, encoding: 'UCS-2' });
  });

  it('treats a lone surrogate and characters that merely look like GSM ones as UCS-2', () => {
    assert.deepEqual(countSegments(`a\ud83d`), { segments: 1, encoding: 'UCS-2' });
    assert.deepEqual(countSegments('“quoted”'), { segments: 1, encoding: 'UCS-2' });
    assert.deepEqual(countSegments('a\u00a0b'), { segments: 1, encoding: 'UCS-2' });
    assert.deepEqual(countSegments('\t'), { segments: 1, encoding: 'UCS-2' });
  });
});
