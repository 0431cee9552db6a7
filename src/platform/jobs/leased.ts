import { type RawBuilder, sql } from 'kysely';
import type { Logger } from 'pino';
import { newId } from '../db/ids.ts';
import type { Db, Executor, Trx } from '../db/pool.ts';
import { inTransaction } from '../db/transaction.ts';
import type { Loop } from './runner.ts';

/**
 * Leased work: the one way a worker loop takes rows to work on. A row is due when the declaration's
 * condition holds and its `lease_until` has passed; a claim (one statement, `FOR UPDATE SKIP LOCKED`,
 * committed at once) sets `lease_id` to a new id, `lease_until` to now + the lease and counts the
 * attempt (unless the declaration counts it by record). The unit of work runs outside any
 * transaction and ends through its `Lease`, whose writes are fenced by `lease_id`: a worker whose
 * lease ran out (paused, or thought dead) changes nothing once another worker took the row. A
 * worker killed mid-way leaves its rows leased; when the lease ends the next claim takes them again.
 *
 * The columns, named once here; a table with two kinds of leased work on a row prefixes them
 * (`send_lease_id`, `report_lease_id`):
 * - `lease_id uuid`: the fencing token of the claim holding the row, NULL when none does;
 * - `lease_until timestamptz`: when the row may next be claimed (now for new work, the lease's end,
 *   the end of a back-off or of a "maybe done" grace), NULL when nothing is left to do;
 * - `attempts integer NOT NULL DEFAULT 0`: attempts made, counted at claim, or, when the declaration
 *   says so, by the write that ends the attempt's lease (a log the user reads numbers its attempts);
 * - `unrecorded_claims integer NOT NULL DEFAULT 0`, only for work counted by record: claims since the
 *   last recorded attempt. Each claim adds one and each record resets it, so a row whose workers died
 *   (or stalled past the lease) every time is seen, and given up, as a row claimed past its attempts is;
 * - `state text`, only for work with a "maybe done" state: `'unconfirmed'` while an outside call
 *   (without an idempotency key) may or may not have happened; its own answer settles the row, or,
 *   once `lease_until` passes, the loop's sweep settles it, once.
 */

/** The lease columns of one kind of leased work. */
export interface LeaseColumns {
  id: string;
  until: string;
  attempts: string;
  unrecorded: string;
  state: string;
}

export function leaseColumns(prefix = ''): LeaseColumns {
  return {
    id: `${prefix}lease_id`,
    until: `${prefix}lease_until`,
    attempts: `${prefix}attempts`,
    unrecorded: `${prefix}unrecorded_claims`,
    state: `${prefix}state`,
  };
}

/** What every leased row has: the table's key (the Citus rule: `org_id` in it). */
export interface LeasedRow {
  org_id: string;
  id: string;
}

/** The handle of one claimed row. Every write through it holds only while the lease does. */
export interface Lease<Row extends LeasedRow> {
  readonly row: Row;
  /** The fencing token. */
  readonly id: string;
  /** This claim's attempt, from 1. */
  readonly attempt: number;
  /** Work counted by record: claims of the row before this one that recorded no attempt (else 0). */
  readonly unrecorded: number;
  /** The row as it is now, locked, if this lease still holds it; null when another worker took it over. */
  held(trx: Trx): Promise<Row | null>;
  /**
   * Runs `work` in a transaction holding the row (see `held`), with the row as it is now; null, with
   * nothing written, when the lease was lost.
   */
  inTransaction<T>(work: (trx: Trx, row: Row) => Promise<T>): Promise<T | null>;
  /** Nothing left to do: the row is no longer due. Its own state (`sent`, `placed`) is the module's to write. */
  complete(trx?: Trx): Promise<boolean>;
  /** Due again after `delayMs`. */
  retry(delayMs: number, trx?: Trx): Promise<boolean>;
  /** The outside call may have happened: never again; its answer or, after `graceMs`, the sweep settles it. */
  unconfirmed(graceMs: number, trx?: Trx): Promise<boolean>;
}

export interface LeasedWork<Row extends LeasedRow> {
  /** The loop's name (metrics, logs). */
  name: string;
  /** How long an idle worker waits before it looks again. */
  intervalMs: number;
  table: string;
  /** For a table with more than one kind of leased work: the columns' prefix (`send_`). */
  prefix?: string;
  /** Which rows are due, besides their lease having run out; the table is aliased `t`. */
  due: RawBuilder<unknown>;
  /** The order rows are claimed in; `t.lease_until` (oldest due first) unless said otherwise. */
  order?: RawBuilder<unknown>;
  /** More columns a claim sets (`status = 'processing'`), on the table aliased `t`. */
  onClaim?: RawBuilder<unknown>;
  leaseMs: number;
  /** Rows claimed at once. */
  batch: number;
  /** Units of work run at once (a bounded pool); the batch unless said otherwise. */
  concurrency?: number;
  /**
   * A unit of work that throws is retried after `backoffMs(attempt)`, until `max` attempts are made;
   * then (or when a row is claimed past `max`: its workers died every time) `exhausted` ends it.
   * Attempts are counted at claim unless `counted` is `'by record'`: then the write that ends the
   * lease counts it (the handle's `complete`, `retry`, `unconfirmed`, or the module's own fenced
   * statement, which must add it and reset `unrecorded_claims`), so a worker that died mid-way costs
   * no attempt; a row claimed `unrecordedMax` times in a row with none recorded (default `max`: its
   * workers died every time) goes to `exhausted` instead.
   */
  attempts: {
    max: number;
    backoffMs: (attempt: number) => number;
    counted?: 'at claim' | 'by record';
    unrecordedMax?: number;
  };
  /**
   * What one row's work does. It ends its lease, or throws (a retry), or leaves it to run out; or it
   * hands back the write that ends its lease still under way (see `Recording`).
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: most units hand nothing back, and say so with `async () => {}`.
  work(lease: Lease<Row>): Promise<void | Recording>;
  /** What a failed attempt writes besides its back-off (its error, a status), in the retry's fenced transaction. */
  onRetry?(trx: Trx, lease: Lease<Row>, error: unknown): Promise<void>;
  /** A row whose attempts are spent; it should end the lease (`complete`, or writes under `held`). */
  exhausted(lease: Lease<Row>, error: unknown): Promise<void>;
  /** Settles a row left "maybe done" past its grace; with it, the loop also sweeps those rows. */
  settleUnconfirmed?(lease: Lease<Row>): Promise<void>;
  /**
   * Its own claim (a prepared statement with joins, say), to the same contract as the default: it
   * leases due rows and counts as the default does (`attempts + 1`, or for work counted by record
   * `unrecorded_claims + 1`), returning the counted column.
   */
  claim?(db: Db, lease: { id: string; ms: number }, limit: number): Promise<Row[]>;
  /** Run as a pool refilled as units finish (`LeasedPool`), instead of a batch per run (`leasedLoop`). */
  refill?: Refill;
}

/**
 * What a unit hands back when its work is done but the write that ends its lease is not (a record
 * batched with others'). In a pool the unit's slot is then free for the next one: `concurrency`
 * bounds the work (requests in flight), not the writes behind it, which the run still waits for
 * before it ends. A failed record is logged; the lease runs out and the row is claimed again.
 */
export interface Recording {
  recorded: Promise<void>;
}

/**
 * A refilling pool: up to `concurrency` units in flight, more claimed as they finish, so one slow
 * unit does not hold up the rest of its batch. A run claims while its last claim came back full and
 * the pool is empty or has room of at least a quarter, and whenever it is woken; after a short claim,
 * wake-ups within `coalesceMs` share the next. It ends when nothing is due and nothing is in flight.
 */
export interface Refill {
  coalesceMs: number;
  /** A run stops claiming after this long, so a stopping worker is never held for long. */
  runBudgetMs: number;
  /** Queues the next run when one stops at its budget with work left; called before its last units finish. */
  handOver(): Promise<void>;
}

/**
 * A `Loop` for the runner: each run sweeps "maybe done" rows past their grace, then claims a batch (or,
 * for a declaration with `refill`, runs its pool; use a `LeasedPool` of its own to wake it too).
 */
export function leasedLoop<Row extends LeasedRow>(db: Db, work: LeasedWork<Row>, log: Logger): Loop {
  if (work.refill) return new LeasedPool(db, { ...work, refill: work.refill }, log).loop();
  const leased = new LeasedTable<Row>(work);
  return {
    name: work.name,
    intervalMs: work.intervalMs,
    run: async () => {
      await sweepUnconfirmed(db, leased, work, log);
      const leases = await leased.claim(db, work.batch);
      await eachBounded(leases, work.concurrency ?? work.batch, async (lease) => {
        const done = await runUnit(work, lease, log);
        await done?.recorded;
      });
      return leases.length === work.batch;
    },
  };
}

async function sweepUnconfirmed<Row extends LeasedRow>(
  db: Db,
  leased: LeasedTable<Row>,
  work: LeasedWork<Row>,
  log: Logger,
): Promise<void> {
  if (!work.settleUnconfirmed) return;
  const settle = work.settleUnconfirmed.bind(work);
  const unconfirmed = await leased.claimUnconfirmed(db, work.batch);
  await eachBounded(unconfirmed, work.concurrency ?? work.batch, (lease) =>
    settle(lease).catch((error) =>
      log.error({ err: error, loop: work.name, id: lease.row.id }, 'settling unconfirmed work failed'),
    ),
  );
}

/**
 * Runs a declaration with `refill` (see `Refill`): at most one run at a time in this process, started
 * by `run()` (a job, the loop) and woken by `wake()` when new work is written here.
 */
export class LeasedPool<Row extends LeasedRow> {
  private readonly leased: LeasedTable<Row>;
  /** The run going on in this process, if any. */
  private running: symbol | null = null;
  private wanted = false;
  private signal: (() => void) | null = null;

  constructor(
    private readonly db: Db,
    private readonly work: LeasedWork<Row> & { refill: Refill },
    private readonly log: Logger,
  ) {
    this.leased = new LeasedTable<Row>(work);
  }

  /** Asks the run going on to claim again; false when no run goes on in this process. */
  wake(): boolean {
    if (!this.running) return false;
    this.wanted = true;
    this.signal?.();
    return true;
  }

  /** A `Loop` that runs the pool every `intervalMs`: it takes over what a dead worker or a lost wake-up left. */
  loop(name = this.work.name): Loop {
    return {
      name,
      intervalMs: this.work.intervalMs,
      run: async () => {
        await this.run();
        return false;
      },
    };
  }

  /** Runs until nothing is due and nothing is in flight, or its budget is spent; a call while one runs only wakes it. */
  async run(): Promise<void> {
    if (this.wake()) return;
    const { db, work, log } = this;
    const { coalesceMs, runBudgetMs } = work.refill;
    const run = Symbol(work.name);
    this.running = run;
    // Synchronous with the decision to stop: a wake() after it starts a new run instead of being lost.
    const release = () => {
      if (this.running !== run) return;
      this.running = null;
      this.signal = null;
    };
    const max = work.concurrency ?? work.batch;
    const inFlight = new Set<Promise<void>>();
    const recording = new Set<Promise<void>>();
    const deadline = Date.now() + runBudgetMs;
    let mayHaveMore = true;
    let lastClaimAt = 0;
    try {
      await sweepUnconfirmed(db, this.leased, work, log);
      for (;;) {
        if (Date.now() > deadline && (inFlight.size > 0 || mayHaveMore || this.wanted)) {
          // The next run starts elsewhere while this one only waits for its units in flight.
          release();
          await work.refill.handOver();
          break;
        }
        // Records waiting count against the slots only past `max` of them: a slow database slows the claims.
        const room = max - inFlight.size - Math.max(0, recording.size - max);
        const worthClaiming =
          room > 0 && (this.wanted || (mayHaveMore && (inFlight.size === 0 || room >= Math.ceil(max / 4))));
        if (worthClaiming) {
          const wait = lastClaimAt + coalesceMs - Date.now();
          if (!mayHaveMore && wait > 0) await sleep(wait);
          this.wanted = false;
          lastClaimAt = Date.now();
          // Measured before the await: units finishing meanwhile must not make a full claim look short.
          const asked = Math.min(work.batch, room);
          const leases = await this.leased.claim(db, asked);
          mayHaveMore = leases.length === asked;
          for (const lease of leases) {
            const unit = runUnit(work, lease, log)
              .then((done) => {
                if (!done) return;
                const { recorded } = done;
                recording.add(recorded);
                void recorded.finally(() => {
                  recording.delete(recorded);
                  this.signal?.();
                });
              })
              .finally(() => {
                inFlight.delete(unit);
                this.signal?.();
              });
            inFlight.add(unit);
          }
          continue;
        }
        if (inFlight.size === 0 && recording.size === 0) {
          if (this.wanted || mayHaveMore) continue;
          release();
          break;
        }
        await new Promise<void>((resolve) => {
          this.signal = resolve;
        });
      }
      await Promise.allSettled(inFlight);
      await Promise.allSettled(recording);
    } catch (error) {
      // Units already under way finish and record before the run reports the failure.
      await Promise.allSettled(inFlight);
      await Promise.allSettled(recording);
      throw error;
    } finally {
      release();
    }
  }
}

/**
 * Runs one unit; resolves when its work is done, with its record still under way if it handed one back
 * (wrapped: an async function returning a bare promise would wait for it).
 */
async function runUnit<Row extends LeasedRow>(
  work: LeasedWork<Row>,
  lease: Lease<Row>,
  log: Logger,
): Promise<Recording | undefined> {
  const { max, backoffMs, unrecordedMax = max } = work.attempts;
  const recordFailed = (error: unknown) =>
    // Unrecorded: the lease runs out and the row is claimed again.
    log.error({ err: error, loop: work.name, id: lease.row.id }, 'recording leased work failed');
  try {
    if (lease.attempt > max) {
      await work.exhausted(lease, new Error(`Not finished in ${max} attempts.`));
      return;
    }
    if (lease.unrecorded >= unrecordedMax) {
      log.error(
        { loop: work.name, id: lease.row.id, leases: lease.unrecorded },
        'leased work given up: no attempt recorded in its last leases',
      );
      await work.exhausted(
        lease,
        new Error(
          `Claimed ${lease.unrecorded} times in a row with no attempt recorded: its workers died or stalled every time.`,
        ),
      );
      return;
    }
    try {
      const done = await work.work(lease);
      return done ? { recorded: done.recorded.catch(recordFailed) } : undefined;
    } catch (error) {
      log.warn(
        { err: error, loop: work.name, id: lease.row.id, attempt: lease.attempt },
        'leased work failed',
      );
      if (lease.attempt >= max) await work.exhausted(lease, error);
      else await retry(work, lease, error, backoffMs(lease.attempt));
    }
  } catch (error) {
    recordFailed(error);
  }
}

async function retry<Row extends LeasedRow>(
  work: LeasedWork<Row>,
  lease: Lease<Row>,
  error: unknown,
  delayMs: number,
): Promise<void> {
  const { onRetry } = work;
  if (!onRetry) {
    await lease.retry(delayMs);
    return;
  }
  await lease.inTransaction(async (trx) => {
    await onRetry.call(work, trx, lease, error);
    await lease.retry(delayMs, trx);
  });
}

/** The statements of one kind of leased work. */
export class LeasedTable<Row extends LeasedRow> {
  private readonly columns: LeaseColumns;
  private readonly countedByRecord: boolean;

  constructor(
    private readonly work: Pick<
      LeasedWork<Row>,
      'table' | 'prefix' | 'due' | 'order' | 'onClaim' | 'leaseMs' | 'claim'
    > & { attempts?: Pick<LeasedWork<Row>['attempts'], 'counted'> },
  ) {
    this.columns = leaseColumns(work.prefix);
    this.countedByRecord = work.attempts?.counted === 'by record';
  }

  /** Claims up to `limit` due rows under one new lease. */
  async claim(db: Db, limit: number): Promise<Lease<Row>[]> {
    const lease = { id: newId(), ms: this.work.leaseMs };
    const rows = this.work.claim
      ? await this.work.claim(db, lease, limit)
      : await this.claimWhere(db, lease, this.work.due, limit, 'due');
    return rows.map((row) => this.lease(db, row, lease.id));
  }

  /** Claims up to `limit` rows left "maybe done" whose grace has passed (their attempts are not counted). */
  async claimUnconfirmed(db: Db, limit: number): Promise<Lease<Row>[]> {
    const lease = { id: newId(), ms: this.work.leaseMs };
    const due = sql`t.${sql.id(this.columns.state)} = 'unconfirmed'`;
    const rows = await this.claimWhere(db, lease, due, limit, 'unconfirmed');
    return rows.map((row) => this.lease(db, row, lease.id, false));
  }

  private async claimWhere(
    db: Db,
    lease: { id: string; ms: number },
    due: RawBuilder<unknown>,
    limit: number,
    kind: 'due' | 'unconfirmed',
  ): Promise<Row[]> {
    const { id, until, attempts, unrecorded } = this.columns;
    const table = sql.table(this.work.table);
    const order = this.work.order ?? sql`t.${sql.id(until)}`;
    const counted =
      kind !== 'due'
        ? sql``
        : this.countedByRecord
          ? sql`, ${sql.id(unrecorded)} = t.${sql.id(unrecorded)} + 1`
          : sql`, ${sql.id(attempts)} = t.${sql.id(attempts)} + 1`;
    const more = kind === 'due' && this.work.onClaim ? sql`, ${this.work.onClaim}` : sql``;
    const { rows } = await sql<Row>`
      UPDATE ${table} t SET ${sql.id(id)} = ${lease.id}::uuid,
        ${sql.id(until)} = now() + ${lease.ms}::float8 * interval '1 millisecond'${counted}${more}
      FROM (SELECT t.org_id, t.id FROM ${table} t
        WHERE ${due} AND t.${sql.id(until)} <= now()
        ORDER BY ${order} LIMIT ${limit}::int FOR UPDATE OF t SKIP LOCKED) due
      WHERE t.org_id = due.org_id AND t.id = due.id
      RETURNING t.*`.execute(db);
    return rows;
  }

  /** The handle of a row claimed under `leaseId`; `recordsAttempt`: ending the lease counts the attempt. */
  lease(db: Db, row: Row, leaseId: string, recordsAttempt = this.countedByRecord): Lease<Row> {
    const { id, until, attempts, unrecorded, state } = this.columns;
    const table = sql.table(this.work.table);
    // Built when used: a pool makes a handle per unit, and many units end through their own statements.
    const fence = () =>
      sql`org_id = ${row.org_id}::uuid AND id = ${row.id}::uuid AND ${sql.id(id)} = ${leaseId}::uuid`;
    const update = async (set: RawBuilder<unknown>, trx?: Trx) => {
      const count = recordsAttempt
        ? sql`, ${sql.id(attempts)} = ${sql.id(attempts)} + 1, ${sql.id(unrecorded)} = 0`
        : sql``;
      const result = await sql`UPDATE ${table} SET ${set}${count} WHERE ${fence()}`.execute(
        trx ?? (db as Executor),
      );
      return Number(result.numAffectedRows ?? 0) > 0;
    };
    const counts = row as unknown as Record<string, unknown>;
    const made = Number(counts[attempts] ?? 0);
    const handle: Lease<Row> = {
      row,
      id: leaseId,
      attempt: recordsAttempt ? made + 1 : made,
      // This claim added one to the row's count.
      unrecorded: recordsAttempt ? Math.max(0, Number(counts[unrecorded] ?? 1) - 1) : 0,
      held: async (trx) => {
        const { rows } = await sql<Row>`SELECT * FROM ${table} WHERE ${fence()} FOR UPDATE`.execute(trx);
        return rows[0] ?? null;
      },
      inTransaction: (work) =>
        inTransaction(db, async (trx) => {
          const now = await handle.held(trx);
          return now ? await work(trx, now) : null;
        }),
      complete: (trx) => update(sql`${sql.id(id)} = NULL, ${sql.id(until)} = NULL`, trx),
      retry: (delayMs, trx) =>
        update(
          sql`${sql.id(id)} = NULL, ${sql.id(until)} = now() + ${delayMs}::float8 * interval '1 millisecond'`,
          trx,
        ),
      unconfirmed: (graceMs, trx) =>
        update(
          sql`${sql.id(id)} = NULL, ${sql.id(state)} = 'unconfirmed',
            ${sql.id(until)} = now() + ${graceMs}::float8 * interval '1 millisecond'`,
          trx,
        ),
    };
    return handle;
  }
}

/** Runs `each` over `items`, at most `size` at a time. */
async function eachBounded<T>(items: T[], size: number, each: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await each(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(size, items.length) }, lane));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
