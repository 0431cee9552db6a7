import type { Redis } from 'ioredis';
import type { WindowCounter, WindowState } from './window-counter.ts';

interface Window {
  count: number;
  endsAt: number;
}

/** Counters in this process: right for one API process, or when no Redis is configured. */
class LocalFixedWindow implements WindowCounter {
  private readonly windows = new Map<string, Window>();
  private lastSweep = 0;

  constructor(
    private readonly prefix: string,
    private readonly now: () => number,
  ) {}

  count(key: string, windowMs: number): WindowState {
    const now = this.now();
    this.sweep(now, windowMs);
    const name = this.prefix + key;
    const window = this.windows.get(name);
    if (!window || window.endsAt <= now) {
      this.windows.set(name, { count: 1, endsAt: now + windowMs });
      return { current: 1, ttl: windowMs };
    }
    window.count += 1;
    return { current: window.count, ttl: window.endsAt - now };
  }

  /** Once a window, forgets callers whose window has ended, so memory follows live callers. */
  private sweep(now: number, windowMs: number): void {
    if (now - this.lastSweep < windowMs) return;
    this.lastSweep = now;
    for (const [name, window] of this.windows) if (window.endsAt <= now) this.windows.delete(name);
  }
}

/** The same window in Redis, so every API process shares the counters: one key per caller, expiring with its window. */
const FIXED_LUA = `
local current = redis.call('INCR', KEYS[1])
if current == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  return { current, tonumber(ARGV[1]) }
end
return { current, redis.call('PTTL', KEYS[1]) }
`;

interface FixedRedis {
  fixedWindow(key: string, windowMs: number): Promise<[number, number]>;
}

/**
 * Fixed-window counters, in this process or in Redis when given (shared by every process): a
 * caller's window starts with its first request and lasts `windowMs`. Its requests are counted until
 * the window ends, refused ones too (the window's budget is spent either way); `ttl` is the time
 * left in the window.
 */
export function fixedWindowCounter(
  redis: Redis | null,
  nameSpace: string,
  now: () => number = Date.now,
): WindowCounter {
  if (!redis) return new LocalFixedWindow(nameSpace, now);
  if (!(redis as unknown as Partial<FixedRedis>).fixedWindow) {
    redis.defineCommand('fixedWindow', { numberOfKeys: 1, lua: FIXED_LUA });
  }
  const commands = redis as unknown as FixedRedis;
  return {
    count: (key, windowMs) =>
      commands
        .fixedWindow(nameSpace + key, windowMs)
        .then(([current, ttl]) => ({ current: Number(current), ttl: Number(ttl) })),
  };
}
