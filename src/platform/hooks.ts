import type { Trx } from './db/pool.ts';

export type HookHandler<T> = (trx: Trx, value: T) => Promise<void>;

/**
 * Where a lower module lets a higher one react to its change, in the transaction of the change, without
 * knowing it. The lower module runs the hook; `src/wiring.ts` registers the handlers, once per process.
 * Handlers run in the order registered; a handler's failure undoes the whole transaction.
 */
export class Hook<T> {
  readonly #handlers: HookHandler<T>[] = [];

  /** Adds a handler; returns the function that removes it (tests). */
  on(handler: HookHandler<T>): () => void {
    this.#handlers.push(handler);
    return () => {
      const at = this.#handlers.indexOf(handler);
      if (at >= 0) this.#handlers.splice(at, 1);
    };
  }

  async run(trx: Trx, value: T): Promise<void> {
    for (const handler of [...this.#handlers]) await handler(trx, value);
  }
}
