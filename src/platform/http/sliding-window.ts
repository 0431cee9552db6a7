import type { Redis } from 'ioredis';
import type { WindowCounter, WindowState } from './window-counter.ts';

/**
 * Sliding-window counters: a fixed window would let a client send twice the limit across a window
 * boundary. The window is cut into 60 buckets; a request is counted until one window after the start
 * of its bucket, that is for between one window less a bucket and one window (59-60 s for a one-minute
 * window): no span of 59 s ever holds more than the limit, and the wait a refusal announces
 * (`Retry-After`) is never longer than the window.
 * Refused requests are not counted. When refused, `ttl` is the time until the next request would be
 * accepted; otherwise the time until the oldest counted request leaves the window (when `remaining`
 * next grows).
 */
const BUCKETS = 60;

/** Bucket number → requests accepted in it, oldest first. */
type Buckets = Array<[bucket: number, count: number]>;

const bucketSize = (windowMs: number) => Math.max(1, Math.ceil(windowMs / BUCKETS));

/** The pure window arithmetic of one request: counted unless refused. */
function slide(entries: Buckets, now: number, windowMs: number, max: number): WindowState {
  const size = bucketSize(windowMs);
  const bucket = Math.floor(now / size);
  while (entries.length > 0 && entries[0][0] <= bucket - BUCKETS) entries.shift();
  let total = 0;
  for (const [, count] of entries) total += count;
  const leaves = (entry: [number, number]) => (entry[0] + BUCKETS) * size - now;

  if (total >= max) {
    let freed = 0;
    for (const entry of entries) {
      freed += entry[1];
      if (total - freed < max) return { current: total + 1, ttl: leaves(entry) };
    }
    return { current: total + 1, ttl: windowMs };
  }
  const last = entries[entries.length - 1];
  if (last && last[0] === bucket) last[1] += 1;
  else entries.push([bucket, 1]);
  return { current: total + 1, ttl: leaves(entries[0]) };
}

/** Counters in this process: right for one API process, or when no Redis is configured. */
class LocalSlidingWindow implements WindowCounter {
  private readonly windows = new Map<string, Buckets>();
  private lastSweep = 0;

  constructor(
    private readonly prefix: string,
    private readonly now: () => number,
  ) {}

  count(key: string, windowMs: number, max: number): WindowState {
    const now = this.now();
    this.sweep(now, windowMs);
    const name = this.prefix + key;
    let entries = this.windows.get(name);
    if (!entries) {
      entries = [];
      this.windows.set(name, entries);
    }
    return slide(entries, now, windowMs, max);
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
local windowMs = tonumber(ARGV[4])
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
if total >= max then
  local freed = 0
  for _, entry in ipairs(entries) do
    freed = freed + entry[2]
    if total - freed < max then return { total + 1, leaves(entry[1]) } end
  end
  return { total + 1, windowMs }
end
redis.call('HINCRBY', key, string.format('%d', bucket), 1)
redis.call('PEXPIRE', key, buckets * size)
if #entries == 0 then return { total + 1, leaves(bucket) } end
return { total + 1, leaves(entries[1][1]) }
`;

interface SlidingRedis {
  slidingWindow(
    key: string,
    size: number,
    buckets: number,
    max: number,
    windowMs: number,
  ): Promise<[number, number]>;
}

/** A sliding window's counters: in this process, or in Redis when given (shared by every process). */
export function slidingWindowCounter(
  redis: Redis | null,
  nameSpace: string,
  now: () => number = Date.now,
): WindowCounter {
  if (!redis) return new LocalSlidingWindow(nameSpace, now);
  if (!(redis as unknown as Partial<SlidingRedis>).slidingWindow) {
    redis.defineCommand('slidingWindow', { numberOfKeys: 1, lua: SLIDE_LUA });
  }
  const commands = redis as unknown as SlidingRedis;
  return {
    count: (key, windowMs, max) =>
      commands
        .slidingWindow(nameSpace + key, bucketSize(windowMs), BUCKETS, max, windowMs)
        .then(([current, ttl]) => ({ current: Number(current), ttl: Number(ttl) })),
  };
}
