import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sequenceTickContext } from '../../src/modules/sequences/jobs.ts';
import { messagingSms, type SequenceSms } from '../../src/modules/sequences/sms.ts';
import { lockClaimedEnrollment } from '../../src/modules/sequences/store.ts';
import { runClaimedStep, runLockedStep } from '../../src/modules/sequences/tick.ts';
import { inTransaction } from '../../src/platform/db/transaction.ts';
import type { Call } from '../crm/crm-client.ts';
import { buildTestApp, createTenant, sleep, type TestApp, type TestTenant } from '../helpers.ts';
import { smsSetup } from '../messaging/support.ts';
import {
  claimDueEnrollments,
  enroll,
  newContact,
  newSequence,
  readEnrollment,
  stepSends,
} from './support.ts';

const FROM = '+14155550440';
/** A lease that runs out at once: the claim it makes is stale by the time the test goes on. */
const SHORT_LEASE_MS = 50;

/**
 * The guarantees of last resort of the sequence tick, driven by hand (no worker runs): a step's key
 * refuses a second send that got past the row lock and the current-step check, and a stale claim of a
 * step that has moved on runs nothing.
 */
describe('sequence steps: a stale claim racing the worker that took it over sends nothing twice', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let call: Call;

  before(async () => {
    t = await buildTestApp({ SEQUENCE_MINUTE_MS: '60000' });
    tenant = await createTenant(t.app);
    call = await smsSetup(t, tenant, FROM, 100);
  });
  after(() => t.close());

  const messagesTo = (phone: string) =>
    t.platform.db
      .selectFrom('sms_messages')
      .select(['body', 'cause_key'])
      .where('to_number', '=', phone)
      .orderBy('created_at')
      .execute();

  /** An enrollment due now, claimed by a worker whose lease then ran out, and taken over by another. */
  async function staleAndTakenOver(steps: Parameters<typeof newSequence>[1]) {
    const sequence = await newSequence(call, steps);
    const contact = await newContact(call, { first_name: 'Kit' });
    const enrollment = await enroll(call, sequence.id, contact.id);
    const [stale] = await claimDueEnrollments(t.platform.db, SHORT_LEASE_MS, 10);
    assert.equal(stale.id, enrollment.id);
    await sleep(SHORT_LEASE_MS * 3);
    const [takeover] = await claimDueEnrollments(t.platform.db, 60_000, 10);
    assert.deepEqual(takeover, stale, 'the lease ran out: another worker claims the same step');
    return { sequence, contact, enrollment, stale, takeover };
  }

  test('two runs of one step that both got past the lock reach the database: the key lets one send through', async () => {
    const { sequence, contact, enrollment, takeover } = await staleAndTakenOver([
      { kind: 'sms', wait_minutes: 0, body: 'One' },
      { kind: 'sms', wait_minutes: 60, body: 'Two' },
    ]);
    // The stale worker found the enrollment at step 0, as the lock and check would let it, before the
    // worker that took over had sent anything.
    const staleRow = await inTransaction(t.platform.db, (trx) => lockClaimedEnrollment(trx, enrollment.id));
    assert.ok(staleRow);
    assert.equal(staleRow.current_step, 0);

    // Both write their message in one window: the one that took over has written its own (not committed)
    // when the stale one starts; it commits once the stale one is inside the SMS module.
    let takeoverSent!: () => void;
    const takeoverHasSent = new Promise<void>((resolve) => {
      takeoverSent = resolve;
    });
    let staleStarted!: () => void;
    const staleHasStarted = new Promise<void>((resolve) => {
      staleStarted = resolve;
    });
    const sms = messagingSms(t.platform.providers.sms.name);
    const takeoverSms: SequenceSms = {
      async send(trx, scope, message) {
        const sent = await sms.send(trx, scope, message);
        takeoverSent();
        await staleHasStarted;
        await sleep(300);
        return sent;
      },
    };
    const staleSms: SequenceSms = {
      async send(trx, scope, message) {
        await takeoverHasSent;
        staleStarted();
        return sms.send(trx, scope, message);
      },
    };
    const [takenOver, staleRun] = await Promise.allSettled([
      runClaimedStep(sequenceTickContext(t.platform, takeoverSms), takeover),
      inTransaction(t.platform.db, (trx) =>
        runLockedStep(sequenceTickContext(t.platform, staleSms), trx, staleRow),
      ),
    ]);
    assert.equal(takenOver.status, 'fulfilled');
    assert.equal(staleRun.status, 'rejected', 'the stale run is refused by the key, its transaction undone');

    assert.deepEqual(await messagesTo(contact.phone), [
      { body: 'One', cause_key: `sequence_step:${enrollment.id}:0` },
    ]);
    assert.equal((await stepSends(t, enrollment.id)).length, 1);
    const now = await readEnrollment(call, sequence.id, enrollment.id);
    assert.equal(now.current_step, 1);
    const debits = (await call('GET', '/fuel/ledger?limit=200')).body.data.filter(
      (entry: any) => entry.reason === 'sms',
    );
    assert.equal(debits.length, 1, 'one FUEL debit');
  });

  test('a stale claim whose step has moved on does nothing: the next step waits its turn', async () => {
    const { sequence, contact, enrollment, stale, takeover } = await staleAndTakenOver([
      { kind: 'sms', wait_minutes: 0, body: 'One' },
      { kind: 'sms', wait_minutes: 1, body: 'Two' },
    ]);
    const context = sequenceTickContext(t.platform);
    await runClaimedStep(context, takeover);
    const advanced = await readEnrollment(call, sequence.id, enrollment.id);
    assert.equal(advanced.current_step, 1);
    assert.ok(Date.parse(advanced.next_run_at) > Date.now() + 30_000, 'step 1 waits its minute');

    // The stale worker wakes up and runs what it claimed: step 0, which has been sent.
    await runClaimedStep(context, stale);
    assert.deepEqual(
      (await messagesTo(contact.phone)).map((message) => message.body),
      ['One'],
      'step 1 is not sent early',
    );
    const after = await readEnrollment(call, sequence.id, enrollment.id);
    assert.equal(after.current_step, 1);
    assert.equal(after.next_run_at, advanced.next_run_at);
    assert.equal((await stepSends(t, enrollment.id)).length, 1);
  });
});
