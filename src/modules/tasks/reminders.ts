import type { Db } from '../../platform/db/pool.ts';
import { inTransaction } from '../../platform/db/transaction.ts';
import { emit } from '../../platform/events/emit.ts';
import { toTask } from './service.ts';
import { claimDueTasks } from './store.ts';

export const TASK_REMINDERS_TASK = 'task_reminders';
/** Tasks are claimed and their events written this many per transaction. */
const BATCH = 200;
/**
 * A task that fell due at most this long ago is still reminded (the job ticks every minute, and a
 * task may be created or rescheduled between ticks); one overdue for longer is not "due soon" any more.
 */
export const REMINDER_GRACE_MS = 5 * 60_000;

/**
 * Emits `task.due_soon` once for every open task that has entered its reminder window: due within
 * `reminderMinutes` from now. Each task is marked reminded in the transaction that writes its event,
 * so a task is reminded exactly once however often, and by however many workers, this runs.
 * Returns how many tasks were reminded.
 */
export async function sendDueSoonReminders(
  db: Db,
  reminderMinutes: number,
  now = new Date(),
): Promise<number> {
  const window = {
    from: new Date(now.getTime() - REMINDER_GRACE_MS),
    until: new Date(now.getTime() + reminderMinutes * 60_000),
  };
  let reminded = 0;
  for (;;) {
    const claimed = await inTransaction(db, async (trx) => {
      const rows = await claimDueTasks(trx, window, now, BATCH);
      for (const row of rows) {
        await emit(trx, { orgId: row.org_id, clientId: row.client_id }, 'task.due_soon', {
          ...toTask(row),
          reminder_minutes: reminderMinutes,
        });
      }
      return rows.length;
    });
    reminded += claimed;
    if (claimed < BATCH) return reminded;
  }
}
