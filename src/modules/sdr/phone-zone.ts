import { parsePhoneNumberFromString } from 'libphonenumber-js';

/**
 * The time zone a phone number most likely rings in. libphonenumber-js knows a number's country but no
 * zones; the zones of a country come from ICU (`Intl.Locale#getTimeZones`, kept current with Node).
 * A country with one zone is that zone. For the countries that span several, North American area codes
 * outside the Eastern zone are mapped below (an area code is tied to a state or province), and other
 * countries take the zone most of their people live in. Anything else is unknown (null): the caller
 * falls back to the SDR settings' zone.
 */

/** North American area codes not in the Eastern zone (the default for +1 numbers of the US). */
const NANP_ZONES: Record<string, string> = {
  ...zone(
    'America/Los_Angeles',
    [
      206, 209, 213, 253, 279, 310, 323, 341, 350, 360, 408, 415, 424, 425, 442, 458, 503, 509, 510, 530, 541,
      559, 562, 564, 619, 626, 628, 650, 657, 661, 669, 702, 707, 714, 725, 747, 760, 775, 805, 818, 820, 831,
      840, 858, 909, 916, 925, 949, 951, 971,
    ],
  ),
  ...zone('America/Denver', [208, 303, 307, 385, 406, 435, 505, 575, 719, 720, 801, 915, 970, 983, 986]),
  ...zone('America/Phoenix', [480, 520, 602, 623, 928]),
  ...zone(
    'America/Chicago',
    [
      205, 210, 214, 217, 218, 224, 225, 228, 251, 254, 256, 262, 274, 281, 308, 309, 312, 314, 316, 318, 319,
      320, 325, 331, 334, 337, 346, 361, 402, 405, 409, 414, 417, 430, 432, 447, 464, 469, 479, 501, 504, 507,
      512, 515, 531, 534, 539, 557, 563, 572, 573, 580, 601, 605, 608, 612, 615, 618, 620, 629, 630, 636, 641,
      651, 659, 660, 662, 682, 701, 708, 712, 713, 715, 726, 731, 737, 763, 769, 773, 779, 785, 806, 815, 816,
      817, 830, 832, 847, 870, 872, 901, 903, 913, 918, 920, 931, 936, 938, 940, 945, 952, 956, 972, 975, 979,
      985,
    ],
  ),
  ...zone('America/Anchorage', [907]),
  ...zone('Pacific/Honolulu', [808]),
  ...zone('America/Vancouver', [236, 250, 604, 672, 778]),
  ...zone('America/Edmonton', [368, 403, 587, 780, 825]),
  ...zone('America/Regina', [306, 639]),
  ...zone('America/Winnipeg', [204, 431]),
  ...zone(
    'America/Toronto',
    [
      226, 249, 289, 343, 365, 382, 416, 437, 519, 548, 613, 647, 705, 807, 905, 418, 438, 450, 514, 579, 581,
      819, 873,
    ],
  ),
  ...zone('America/Halifax', [782, 902]),
  ...zone('America/Moncton', [506]),
  ...zone('America/St_Johns', [709]),
};

/** The zone most of the people of a country that spans several live in. */
const MAIN_ZONE: Record<string, string> = {
  US: 'America/New_York',
  CA: 'America/Toronto',
  AU: 'Australia/Sydney',
  BR: 'America/Sao_Paulo',
  MX: 'America/Mexico_City',
  RU: 'Europe/Moscow',
  DE: 'Europe/Berlin',
  ES: 'Europe/Madrid',
  PT: 'Europe/Lisbon',
  NZ: 'Pacific/Auckland',
  AR: 'America/Argentina/Buenos_Aires',
  CL: 'America/Santiago',
  ID: 'Asia/Jakarta',
  KZ: 'Asia/Almaty',
  CN: 'Asia/Shanghai',
  UA: 'Europe/Kyiv',
  EC: 'America/Guayaquil',
  CD: 'Africa/Kinshasa',
  MN: 'Asia/Ulaanbaatar',
  MY: 'Asia/Kuala_Lumpur',
  FR: 'Europe/Paris',
  GB: 'Europe/London',
  NL: 'Europe/Amsterdam',
  DK: 'Europe/Copenhagen',
};

function zone(name: string, areaCodes: number[]): Record<string, string> {
  return Object.fromEntries(areaCodes.map((code) => [String(code), name]));
}

/** The zone of an E.164 number, or null when it cannot be told. */
export function phoneTimeZone(e164: string): string | null {
  const parsed = parsePhoneNumberFromString(e164);
  if (!parsed?.country) return null;
  if (parsed.countryCallingCode === '1') {
    const areaZone = NANP_ZONES[parsed.nationalNumber.slice(0, 3)];
    if (areaZone && (parsed.country === 'US' || parsed.country === 'CA')) return areaZone;
  }
  if (MAIN_ZONE[parsed.country]) return MAIN_ZONE[parsed.country];
  const zones = countryZones(parsed.country);
  return zones.length === 1 ? zones[0] : null;
}

function countryZones(country: string): string[] {
  const locale = new Intl.Locale(`und-${country}`) as Intl.Locale & {
    getTimeZones?: () => string[] | undefined;
    timeZones?: string[];
  };
  return locale.getTimeZones?.() ?? locale.timeZones ?? [];
}
