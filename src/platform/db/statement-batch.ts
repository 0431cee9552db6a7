/**
 * One statement for many callers (group commit): the first item is written on the next turn of the
 * event loop with whatever else arrived in that turn; items that arrive while a statement runs go
 * together into the next one. Under a trickle each item is a statement of its own; under load a
 * statement carries everything that queued behind the last, so the statement rate stays flat while
 * the item rate grows. A caller gets its own item's result; a failed statement fails each of its items.
 */
export class StatementBatch<Item, Result> {
  private queue: Array<{ item: Item; resolve: (result: Result) => void; reject: (error: unknown) => void }> =
    [];
  private writing = false;

  constructor(
    /** Writes the items in one statement; returns one result per item, in their order. */
    private readonly write: (items: Item[]) => Promise<Result[]>,
    private readonly maxItems: number,
  ) {}

  add(item: Item): Promise<Result> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.writing) return;
      this.writing = true;
      setImmediate(() => void this.drain());
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxItems);
      try {
        const results = await this.write(batch.map((entry) => entry.item));
        for (const [index, entry] of batch.entries()) entry.resolve(results[index]);
      } catch (error) {
        for (const entry of batch) entry.reject(error);
      }
    }
    this.writing = false;
  }
}
