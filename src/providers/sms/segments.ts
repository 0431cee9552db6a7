/**
 * Carrier segment counting, which decides what an SMS costs. A body that fits the GSM 03.38 alphabet is sent
 * as GSM-7 (160 septets alone, 153 per part of a concatenated message: the other 7 carry the part header);
 * a character of the extension table takes two septets (an escape and the character). One character outside
 * both tables turns the whole body into UCS-2: 70 UTF-16 code units alone, 67 per part. A part never ends
 * between an escape and its character, nor between the two halves of a surrogate pair, so such a pair that
 * would straddle a boundary moves whole to the next part, as handsets and carriers split it.
 */

export type SmsEncoding = 'GSM-7' | 'UCS-2';

export interface SegmentCount {
  segments: number;
  encoding: SmsEncoding;
}

const GSM_BASIC =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?' +
  '¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
const GSM_EXTENSION = '\f^{}\\[~]|€';

const SEPTETS = new Map<string, number>([
  ...[...GSM_BASIC].map((char): [string, number] => [char, 1]),
  ...[...GSM_EXTENSION].map((char): [string, number] => [char, 2]),
]);

const LIMITS: Record<SmsEncoding, { single: number; part: number }> = {
  'GSM-7': { single: 160, part: 153 },
  'UCS-2': { single: 70, part: 67 },
};

/** The segments a carrier bills for `body`, and the encoding it is sent in. An empty body is one segment. */
export function countSegments(body: string): SegmentCount {
  const gsm = septetSizes(body);
  const encoding: SmsEncoding = gsm ? 'GSM-7' : 'UCS-2';
  // Iterating a string yields code points: an astral character is one item of size 2 (its surrogate pair).
  const sizes = gsm ?? [...body].map((char) => char.length);
  return { segments: pack(sizes, LIMITS[encoding]), encoding };
}

/** The septets of each character, or null when one character is outside the GSM-7 tables. */
function septetSizes(body: string): number[] | null {
  const sizes: number[] = [];
  for (const char of body) {
    const size = SEPTETS.get(char);
    if (size === undefined) return null;
    sizes.push(size);
  }
  return sizes;
}

/** Fills parts in order with indivisible characters of the given sizes. */
function pack(sizes: number[], limits: { single: number; part: number }): number {
  const total = sizes.reduce((sum, size) => sum + size, 0);
  if (total <= limits.single) return 1;
  let segments = 1;
  let used = 0;
  for (const size of sizes) {
    if (used + size > limits.part) {
      segments += 1;
      used = 0;
    }
    used += size;
  }
  return segments;
}
