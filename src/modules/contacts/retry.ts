const RETRYABLE = new Set(['40P01', '40001']);

/**
 * Runs a write again when PostgreSQL chose it as a deadlock victim (or a serialization failure): its
 * transaction rolled back whole, so a retry is safe. Rare: concurrent writers lock contacts in one order.
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
