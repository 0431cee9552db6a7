import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { insideWindow, instantOf, isTimeZone, nextOpening } from './calling-window.ts';
import { phoneTimeZone } from './phone-zone.ts';
import { prospectZone } from './service.ts';

const WEEKDAYS = { start: '09:00', end: '20:00', days: [1, 2, 3, 4, 5] };
const at = (iso: string) => new Date(iso);

describe('calling windows in local time, across DST changes', () => {
  test('09:00 New York is 14:00Z before the spring change and 13:00Z after it', () => {
    // Friday 2026-03-06, EST (UTC-5).
    assert.equal(insideWindow(at('2026-03-06T13:59:00Z'), 'America/New_York', WEEKDAYS), false);
    assert.equal(insideWindow(at('2026-03-06T14:00:00Z'), 'America/New_York', WEEKDAYS), true);
    // Monday 2026-03-09, EDT (UTC-4) since Sunday 02:00.
    assert.equal(insideWindow(at('2026-03-09T12:59:00Z'), 'America/New_York', WEEKDAYS), false);
    assert.equal(insideWindow(at('2026-03-09T13:00:00Z'), 'America/New_York', WEEKDAYS), true);
    // The end is exclusive: 20:00 EDT is 00:00Z the next UTC day.
    assert.equal(insideWindow(at('2026-03-09T23:59:00Z'), 'America/New_York', WEEKDAYS), true);
    assert.equal(insideWindow(at('2026-03-10T00:00:00Z'), 'America/New_York', WEEKDAYS), false);
  });

  test('the next opening after a Friday evening is Monday 09:00 local, whichever offset Monday has', () => {
    // Friday 20:00 EST → Monday 09:00 EDT (spring forward on the Sunday between).
    assert.equal(
      nextOpening(at('2026-03-07T01:00:00Z'), 'America/New_York', WEEKDAYS).toISOString(),
      '2026-03-09T13:00:00.000Z',
    );
    // Friday 21:00 EDT → Monday 09:00 EST (fall back on 2026-11-01).
    assert.equal(
      nextOpening(at('2026-10-31T01:00:00Z'), 'America/New_York', WEEKDAYS).toISOString(),
      '2026-11-02T14:00:00.000Z',
    );
    // Berlin changes on another weekend: Friday 2026-03-27 21:00 CET → Monday 09:00 CEST = 07:00Z.
    assert.equal(
      nextOpening(at('2026-03-27T20:00:00Z'), 'Europe/Berlin', WEEKDAYS).toISOString(),
      '2026-03-30T07:00:00.000Z',
    );
    // Sydney's DST starts 2026-10-04: Friday 2026-10-02 21:00 AEST → Monday 09:00 AEDT = Sunday 22:00Z.
    assert.equal(
      nextOpening(at('2026-10-02T11:00:00Z'), 'Australia/Sydney', WEEKDAYS).toISOString(),
      '2026-10-04T22:00:00.000Z',
    );
  });

  test('inside the window the next opening is now; before it, today at the start', () => {
    const inside = at('2026-06-03T15:00:00Z'); // Wednesday 11:00 EDT
    assert.equal(nextOpening(inside, 'America/New_York', WEEKDAYS), inside);
    assert.equal(
      nextOpening(at('2026-06-03T11:00:00Z'), 'America/New_York', WEEKDAYS).toISOString(),
      '2026-06-03T13:00:00.000Z',
    );
  });

  test('a start inside the hour DST skips opens just after the gap, inside the window', () => {
    const sundayNight = { start: '02:30', end: '04:00', days: [7] };
    const opening = nextOpening(at('2026-03-07T17:00:00Z'), 'America/New_York', sundayNight);
    assert.equal(opening.toISOString(), '2026-03-08T07:30:00.000Z'); // 03:30 EDT
    assert.equal(insideWindow(opening, 'America/New_York', sundayNight), true);
  });

  test('a local time repeated by the fall change resolves to an instant with that wall-clock time', () => {
    const instant = instantOf('America/New_York', 2026, 11, 1, 90); // 01:30, which happens twice
    assert.ok(
      ['2026-11-01T05:30:00.000Z', '2026-11-01T06:30:00.000Z'].includes(instant.toISOString()),
      instant.toISOString(),
    );
  });

  test('calling days are ISO weekdays in the local calendar, not UTC', () => {
    const saturdayOnly = { start: '09:00', end: '20:00', days: [6] };
    // 2026-06-06T02:00Z is Friday 22:00 in New York but Saturday 11:00 in Tokyo.
    assert.equal(insideWindow(at('2026-06-06T02:00:00Z'), 'Asia/Tokyo', saturdayOnly), true);
    assert.equal(insideWindow(at('2026-06-06T02:00:00Z'), 'America/New_York', saturdayOnly), false);
  });

  test('time zone names are IANA names the platform knows', () => {
    assert.equal(isTimeZone('America/New_York'), true);
    assert.equal(isTimeZone('UTC'), true);
    assert.equal(isTimeZone('Mars/Olympus'), false);
    assert.equal(isTimeZone('EST'), false);
  });
});

describe("a prospect's time zone", () => {
  test('from the phone number: country, and area code where a country spans zones', () => {
    assert.equal(phoneTimeZone('+14155550123'), 'America/Los_Angeles');
    assert.equal(phoneTimeZone('+12125550123'), 'America/New_York');
    assert.equal(phoneTimeZone('+13125550123'), 'America/Chicago');
    assert.equal(phoneTimeZone('+16045550123'), 'America/Vancouver');
    assert.equal(phoneTimeZone('+442079460000'), 'Europe/London');
    assert.equal(phoneTimeZone('+33142685300'), 'Europe/Paris');
    assert.equal(phoneTimeZone('+81312345678'), 'Asia/Tokyo');
    assert.equal(phoneTimeZone('+61291234567'), 'Australia/Sydney');
    assert.equal(phoneTimeZone('+999'), null);
  });

  test('explicit, else the contact, else the phone, else the settings, the org, UTC', () => {
    const contact = { phone: '+14155550123', timezone: 'America/Denver' };
    assert.deepEqual(prospectZone('Asia/Tokyo', contact, 'Europe/Paris', 'UTC'), {
      timezone: 'Asia/Tokyo',
      source: 'explicit',
    });
    assert.deepEqual(prospectZone(undefined, contact, null, null), {
      timezone: 'America/Denver',
      source: 'contact',
    });
    assert.deepEqual(prospectZone(undefined, { ...contact, timezone: null }, null, null), {
      timezone: 'America/Los_Angeles',
      source: 'phone',
    });
    const unknown = { phone: null, timezone: null };
    assert.deepEqual(prospectZone(undefined, unknown, 'Europe/Paris', 'Asia/Tokyo'), {
      timezone: 'Europe/Paris',
      source: 'settings',
    });
    assert.deepEqual(prospectZone(undefined, unknown, null, 'Asia/Tokyo'), {
      timezone: 'Asia/Tokyo',
      source: 'org',
    });
    assert.deepEqual(prospectZone(undefined, unknown, null, null), { timezone: 'UTC', source: 'default' });
  });
});
