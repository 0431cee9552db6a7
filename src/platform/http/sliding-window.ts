import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { Redis } from 'ioredis';

/**
 * A sliding-window store for `@fastify/rate-limit`, whose own stores count fixed windows (a client
 * could then send twice the limit across a window boundary). The window is cut into 60 buckets; a
 * request is counted until one window after the start of its bucket, that is for between one window
 * less a bucket and one window (59-60 s for a one-minute window): no span of 59 s ever holds more
 * than the limit, and the wait a refusal announces (`Retry-After`) is never longer than the window.
 * Refused requests are not counted.
 *
 * `current` and `ttl` follow the plugin's contract: `current > max` means refused; `ttl` is the time
 * until the next request would be accepted when refused, and otherwise the time until the oldest
 * counted request leaves the window (when `remaining` next grows).
 */
export const BUCKETS = 60;

export interface WindowState {
  current: number;
  ttl: number;
}

type Callback = (error: Error | null, result?: WindowState) => void;

/** Bucket number → requests accepted in it, oldest first. */
type Buckets = Array<[bucket: number, count: number]>;

const bucketSize = (windowMs: number) => Math.max(1, Math.ceil(windowMs / BUCKETS));

/** The pure window arithmetic, shared by the in-process store and its tests. */
export function slide(entries: Buckets, now: number, windowMs: number, max: number, increment: boolean) {
  const size = bucketSize(windowMs);
  const bucket = Math.floor(now / size);
  while (entries.length > 0 && entries[0][0] <= bucket - BUCKETS) entries.shift();
  let total = 0;
  for (const [, count] of entries) total += count;
  const leaves = (entry: [number, number]) => (entry[0] + BUCKETS) * size - now;

  if (increment && total >= max) {
    let freed = 0;
    for (const entry of entries) {
      freed += entry[1];
      if (total - freed < max) return { current: total + 1, ttl: leaves(entry) };
    }
    return { current: total + 1, ttl: windowMs };
  }
  if (increment) {
    const last = entries[entries.length - 1];
    if (last && last[0] === bucket) last[1] += 1;
    else entries.push([bucket, 1]);
    total += 1;
  }
  return { current: total, ttl: entries.length > 0 ? leaves(entries[0]) : 0 };
}

/** Counters in this process: right for one API process, or when no Redis is configured. */
class LocalSlidingWindow {
  private readonly windows = new Map<string, Buckets>();
  private lastSweep = 0;

  constructor(private readonly now: () => number) {}

  hit(key: string, windowMs: number, max: number, increment: boolean): WindowState {
    const now = this.now();
    this.sweep(now, windowMs);
    let entries = this.windows.get(key);
    if (!entries) {
      if (!increment) return { current: 0, ttl: 0 };
      entries = [];
      this.windows.set(key, entries);
    }
    return slide(entries, now, windowMs, max, increment);
  }

  /** Once a window, forgets callers whose requests have all left it, so memory follows live callers. */
  private sweep(now: number, windowMs: number): void {
    if (now - this.lastSweep < windowMs) return;
    this.lastSweep = now;
    const oldest = Math.floor(now / bucketSize(windowMs)) - BUCKETS;
    for (const [key, entries] of this.windows) {
      const newest = entries[entries.length - 1];
      if (!newest || newest[0] <= oldest) this.windows.delete(key);
    }
  }
}

/** The same arithmetic in one Lua script, so every API process shares the counters through Redis. */
const SLIDE_LUA = `
local key = KEYS[1]
local size = tonumber(ARGV[1])
local buckets = tonumber(ARGV[2])
local max = tonumber(ARGV[3])
local increment = ARGV[4] == '1'
local windowMs = tonumber(ARGV[5])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local bucket = math.floor(now / size)
local flat = redis.call('HGETALL', key)
local entries = {}
local total = 0
for i = 1, #flat, 2 do
  local b = tonumber(flat[i])
  local c = tonumber(flat[i + 1])
  if b <= bucket - buckets then
    redis.call('HDEL', key, flat[i])
  else
    table.insert(entries, { b, c })
    total = total + c
  end
end
table.sort(entries, function(x, y) return x[1] < y[1] end)
local function leaves(b) return (b + buckets) * size - now end
if increment and total >= max then
  local freed = 0
  for _, entry in ipairs(entries) do
    freed = freed + entry[2]
    if total - freed < max then return { total + 1, leaves(entry[1]) } end
  end
  return { total + 1, windowMs }
end
if increment then
  redis.call('HINCRBY', key, string.format('%d', bucket), 1)
  redis.call('PEXPIRE', key, buckets * size)
  total = total + 1
  if #entries == 0 then return { total, leaves(bucket) } end
end
if #entries == 0 then return { total, 0 } end
return { total, leaves(entries[1][1]) }
`;

interface SlidingRedis {
  slidingWindow(
    key: string,
    size: number,
    buckets: number,
    max: number,
    increment: '0' | '1',
    windowMs: number,
  ): Promise<[number, number]>;
}

function redisHit(
  redis: Redis,
  key: string,
  windowMs: number,
  max: number,
  increment: boolean,
): Promise<WindowState> {
  if (!(redis as unknown as Partial<SlidingRedis>).slidingWindow) {
    redis.defineCommand('slidingWindow', { numberOfKeys: 1, lua: SLIDE_LUA });
  }
  return (redis as unknown as SlidingRedis)
    .slidingWindow(key, bucketSize(windowMs), BUCKETS, max, increment ? '1' : '0', windowMs)
    .then(([current, ttl]) => ({ current: Number(current), ttl: Number(ttl) }));
}

/** The store class `@fastify/rate-limit` instantiates: Redis when given, else in process. */
export function slidingWindowStore(
  redis: Redis | null,
  nameSpace: string,
  now: () => number = Date.now,
): FastifyRateLimitStoreCtor {
  class SlidingWindowStore implements FastifyRateLimitStore {
    private readonly local = new LocalSlidingWindow(now);

    constructor(
      _options?: unknown,
      private readonly prefix = nameSpace,
    ) {}

    incr(key: string, callback: Callback, timeWindow: number, max: number): void {
      this.run(key, callback, timeWindow, max, true);
    }

    read(key: string, callback: Callback, timeWindow: number, max: number): void {
      this.run(key, callback, timeWindow, max, false);
    }

    child(routeOptions: { method?: unknown; url?: string }): FastifyRateLimitStore {
      return new SlidingWindowStore(
        undefined,
        `${this.prefix}${String(routeOptions.method)}${routeOptions.url}-`,
      );
    }

    private run(key: string, callback: Callback, windowMs: number, max: number, increment: boolean): void {
      if (!redis) {
        callback(null, this.local.hit(this.prefix + key, windowMs, max, increment));
        return;
      }
      redisHit(redis, this.prefix + key, windowMs, max, increment).then(
        (state) => callback(null, state),
        (error: Error) => callback(error),
      );
    }
  }
  return SlidingWindowStore;
}
