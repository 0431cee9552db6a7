/**
 * Calling windows in a prospect's local time, with the platform's `Intl` (ICU's time-zone data, kept
 * current with Node): a window is `[start, end)` local wall-clock time on the ISO weekdays given, so a
 * 09:00 start is 09:00 local on either side of a DST change.
 */

export interface CallingWindow {
  /** `HH:mm`, local. */
  start: string;
  /** `HH:mm`, local; after `start`. */
  end: string;
  /** ISO weekdays, 1 = Monday … 7 = Sunday. */
  days: number[];
}

interface LocalTime {
  year: number;
  month: number;
  day: number;
  /** ISO weekday, 1 = Monday. */
  weekday: number;
  /** Minutes since local midnight. */
  minutes: number;
}

const WEEKDAYS: Record<string, number> = { Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6, Sun: 7 };
const formats = new Map<string, Intl.DateTimeFormat>();
const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;

function formatOf(zone: string): Intl.DateTimeFormat {
  let format = formats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      weekday: 'short',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formats.set(zone, format);
  }
  return format;
}

/** Whether `name` is an IANA time zone the platform knows (`America/New_York`, `UTC`). */
export function isTimeZone(name: string): boolean {
  if (name !== 'UTC' && !name.includes('/')) return false;
  try {
    formatOf(name);
    return true;
  } catch {
    return false;
  }
}

function localTime(instant: number, zone: string): LocalTime & { second: number } {
  const parts: Record<string, string> = {};
  for (const part of formatOf(zone).formatToParts(instant)) parts[part.type] = part.value;
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    weekday: WEEKDAYS[parts.weekday],
    minutes: Number(parts.hour) * 60 + Number(parts.minute),
    second: Number(parts.second),
  };
}

/** The zone's offset from UTC at `instant`, in milliseconds. */
function offsetAt(instant: number, zone: string): number {
  const t = localTime(instant, zone);
  const asUtc = Date.UTC(t.year, t.month - 1, t.day, 0, t.minutes, t.second);
  return asUtc - Math.floor(instant / 1000) * 1000;
}

/**
 * The instant of a local wall-clock time. A time a DST change skips (02:30 on a spring-forward night)
 * comes out as the instant just after the gap, local time then being past it.
 */
export function instantOf(zone: string, year: number, month: number, day: number, minutes: number): Date {
  const wall = Date.UTC(year, month - 1, day, 0, minutes);
  const first = wall - offsetAt(wall, zone);
  const second = wall - offsetAt(first, zone);
  return new Date(Math.max(first, second));
}

export function minutesOf(hhmm: string): number {
  const [hours, minutes] = hhmm.split(':').map(Number);
  return hours * 60 + minutes;
}

/** Whether `at` is inside the window in `zone`. */
export function insideWindow(at: Date, zone: string, window: CallingWindow): boolean {
  const local = localTime(at.getTime(), zone);
  return (
    window.days.includes(local.weekday) &&
    local.minutes >= minutesOf(window.start) &&
    local.minutes < minutesOf(window.end)
  );
}

/** `at` when it is inside the window, else the next instant the window opens in `zone` (within a week). */
export function nextOpening(at: Date, zone: string, window: CallingWindow): Date {
  if (insideWindow(at, zone, window)) return at;
  const start = minutesOf(window.start);
  const now = localTime(at.getTime(), zone);
  // Walk local calendar days from today; the calendar itself is zone-free, so plain UTC date maths.
  for (let offset = 0; offset <= 7; offset++) {
    const date = new Date(Date.UTC(now.year, now.month - 1, now.day) + offset * DAY_MS);
    const weekday = ((now.weekday - 1 + offset) % 7) + 1;
    if (!window.days.includes(weekday)) continue;
    const opening = instantOf(zone, date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate(), start);
    if (opening.getTime() > at.getTime()) return opening;
  }
  // No calling day at all cannot happen (calling_days is never empty); a week on is a safe answer.
  return new Date(at.getTime() + 7 * DAY_MS);
}
