import type { Db, Trx } from './pool.ts';

export interface TransactionOptions {
  /** Read committed unless said otherwise. */
  isolation?: 'repeatable read' | 'serializable';
  readOnly?: boolean;
}

/**
 * Runs one use case in one transaction: committed when `work` returns, rolled back when it throws.
 * The only place a transaction is opened; it is called at the edge of a use case (a route, a job),
 * and `trx` is passed down to the services and stores, which never open one themselves.
 */
export function inTransaction<T>(
  db: Db,
  work: (trx: Trx) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  let transaction = db.transaction();
  if (options.isolation) transaction = transaction.setIsolationLevel(options.isolation);
  if (options.readOnly) transaction = transaction.setAccessMode('read only');
  return transaction.execute(work);
}

const RETRYABLE = new Set(['40P01', '40001']);

/**
 * Runs a whole transaction again when PostgreSQL chose it as a deadlock victim (or a serialization
 * failure): it rolled back whole, so a retry is safe. Wraps the edge, around `inTransaction` or
 * `runIdempotent`, for writes that lock several rows of one kind (contacts).
 */
export async function retryOnDeadlock<T>(work: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= attempts || !RETRYABLE.has((error as { code?: string }).code ?? '')) throw error;
    }
  }
}
