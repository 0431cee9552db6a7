/** A caller's standing in its rate-limit window, as a counter answers it. */
export interface WindowState {
  /** Requests counted in the window, this one included: past the limit, the request is refused. */
  current: number;
  /** Milliseconds until more requests become available (`X-RateLimit-Reset`, `Retry-After`). */
  ttl: number;
}

/**
 * The counters of one limit: in this process (answered at once) or in Redis (a promise). Each
 * window kind (`fixed-window.ts`, `sliding-window.ts`) makes one; `rate-limit.ts` and the
 * failed-authentication limits count through it.
 */
export interface WindowCounter {
  count(key: string, windowMs: number, max: number): WindowState | Promise<WindowState>;
}
