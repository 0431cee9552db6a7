import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { jobRegistry } from '../../src/jobs.ts';
import { sendDueSoonReminders, TASK_REMINDERS_TASK } from '../../src/modules/tasks/reminders.ts';
import { buildTestApp, createTenant, eventually, type TestApp, type TestTenant } from '../helpers.ts';
import { type Call, caller, errorOf, eventsOfType, insertCompany, insertContact } from './fixtures.ts';

const UNKNOWN = '00000000-0000-7000-8000-000000000000';
const minutesFromNow = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString();

describe('tasks', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let call: Call;
  let scope: { orgId: string; clientId: string };

  before(async () => {
    t = await buildTestApp();
    tenant = await createTenant(t.app);
    call = caller(t.app, tenant.client);
    scope = { orgId: tenant.orgId, clientId: tenant.clientId };
  });
  after(() => t.close());

  const createTask = async (body: Record<string, unknown>, as: Call = call) => {
    const response = await as('POST', '/v1/crm/tasks', body);
    assert.equal(response.statusCode, 201, response.body);
    return response.json().task;
  };

  test('POST /v1/crm/tasks with defaults, and with every field; GET one', async () => {
    const minimal = await createTask({ title: 'Call back' });
    assert.equal(minimal.title, 'Call back');
    assert.equal(minimal.status, 'open');
    assert.equal(minimal.priority, 'normal');
    assert.equal(minimal.task_type, 'todo');
    assert.equal(minimal.due_at, null);
    assert.equal(minimal.completed_at, null);
    assert.equal(minimal.reminded_at, null);

    const contactId = await insertContact(t.database.pool, scope);
    const companyId = await insertCompany(t.database.pool, scope);
    const { deal } = (await call('POST', '/v1/crm/deals', { name: 'For a task' })).json();
    const assignee = '0191d3a0-0000-7000-8000-0000000000aa';
    const full = await createTask({
      title: 'Send proposal',
      body: 'Include the pricing sheet',
      task_type: 'email',
      priority: 'urgent',
      assignee_user_id: assignee,
      contact_id: contactId,
      company_id: companyId,
      deal_id: deal.id,
      due_at: '2030-01-02T03:04:05.678901Z',
      status: 'in_progress',
    });
    assert.equal(full.task_type, 'email');
    assert.equal(full.priority, 'urgent');
    assert.equal(full.assignee_user_id, assignee);
    assert.equal(full.contact_id, contactId);
    assert.equal(full.company_id, companyId);
    assert.equal(full.deal_id, deal.id);
    assert.equal(full.due_at, '2030-01-02T03:04:05.678Z');
    assert.equal(full.status, 'in_progress');
    const read = await call('GET', `/v1/crm/tasks/${full.id}`);
    assert.equal(read.statusCode, 200);
    assert.deepEqual(read.json(), { task: full });
    errorOf(await call('GET', `/v1/crm/tasks/${UNKNOWN}`), 404);
  });

  test('Idempotency-Key on task creation replays the first response', async () => {
    const key = { 'idempotency-key': 'task-once' };
    const first = await call('POST', '/v1/crm/tasks', { title: 'Only once' }, key);
    const second = await call('POST', '/v1/crm/tasks', { title: 'Only once' }, key);
    assert.equal(first.statusCode, 201);
    assert.equal(second.statusCode, 201);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.deepEqual(second.json(), first.json());
    const all = (await call('GET', '/v1/crm/tasks?limit=200')).json().data;
    assert.equal(all.filter((task: any) => task.title === 'Only once').length, 1);
  });

  test('PATCH completed=true completes once: completed_at, status, one task.completed under concurrency', async () => {
    const task = await createTask({ title: 'Contended', due_at: minutesFromNow(600) });
    const results = await Promise.all(
      Array.from({ length: 10 }, () => call('PATCH', `/v1/crm/tasks/${task.id}`, { completed: true })),
    );
    for (const response of results) {
      assert.equal(response.statusCode, 200);
      assert.equal(response.json().task.status, 'completed');
    }
    const completed = (await call('GET', `/v1/crm/tasks/${task.id}`)).json().task;
    assert.equal(completed.status, 'completed');
    assert.ok(completed.completed_at);
    const events = (await eventsOfType(t.app, tenant.client, 'task.completed')).filter(
      (e) => e.data.id === task.id,
    );
    assert.equal(events.length, 1, 'task.completed exactly once');
    assert.deepEqual(events[0].data, completed, 'the event carries the task as the API returns it');

    const again = (await call('PATCH', `/v1/crm/tasks/${task.id}`, { completed: true })).json().task;
    assert.equal(again.completed_at, completed.completed_at, 'completing a completed task changes nothing');
  });

  test('reopening clears completed_at; completing again emits again; status=completed also completes', async () => {
    const task = await createTask({ title: 'Twice' });
    await call('PATCH', `/v1/crm/tasks/${task.id}`, { completed: true });
    const reopened = (await call('PATCH', `/v1/crm/tasks/${task.id}`, { completed: false })).json().task;
    assert.equal(reopened.status, 'open');
    assert.equal(reopened.completed_at, null);
    const viaStatus = (await call('PATCH', `/v1/crm/tasks/${task.id}`, { status: 'completed' })).json().task;
    assert.equal(viaStatus.status, 'completed');
    assert.ok(viaStatus.completed_at);
    const events = (await eventsOfType(t.app, tenant.client, 'task.completed')).filter(
      (e) => e.data.id === task.id,
    );
    assert.equal(events.length, 2);

    const cancelled = (await call('PATCH', `/v1/crm/tasks/${task.id}`, { status: 'cancelled' })).json().task;
    assert.equal(cancelled.status, 'cancelled');
    assert.equal(cancelled.completed_at, null);

    const contradiction = errorOf(
      await call('PATCH', `/v1/crm/tasks/${task.id}`, { completed: true, status: 'open' }),
      400,
    );
    assert.equal(contradiction.details.fields[0].field, 'completed');
    errorOf(await call('PATCH', `/v1/crm/tasks/${task.id}`, { completed: false, status: 'completed' }), 400);

    const bornDone = await createTask({ title: 'Logged as done', status: 'completed' });
    assert.ok(bornDone.completed_at);
    const bornEvents = (await eventsOfType(t.app, tenant.client, 'task.completed')).filter(
      (e) => e.data.id === bornDone.id,
    );
    assert.equal(bornEvents.length, 1);
  });

  test('PATCH updates fields and clears them with null; DELETE removes the task', async () => {
    const task = await createTask({
      title: 'Edit me',
      body: 'old',
      priority: 'low',
      due_at: minutesFromNow(300),
    });
    const updated = (
      await call('PATCH', `/v1/crm/tasks/${task.id}`, {
        title: 'Edited',
        body: null,
        priority: 'high',
        task_type: 'follow_up',
        due_at: null,
        status: 'in_progress',
      })
    ).json().task;
    assert.equal(updated.title, 'Edited');
    assert.equal(updated.body, null);
    assert.equal(updated.priority, 'high');
    assert.equal(updated.task_type, 'follow_up');
    assert.equal(updated.due_at, null);
    assert.equal(updated.status, 'in_progress');
    assert.deepEqual((await call('PATCH', `/v1/crm/tasks/${task.id}`, {})).json().task, updated);
    const badRef = errorOf(await call('PATCH', `/v1/crm/tasks/${task.id}`, { contact_id: UNKNOWN }), 400);
    assert.equal(badRef.details.fields[0].field, 'contact_id');

    const deleted = await call('DELETE', `/v1/crm/tasks/${task.id}`);
    assert.equal(deleted.statusCode, 204);
    assert.equal(deleted.body, '');
    errorOf(await call('GET', `/v1/crm/tasks/${task.id}`), 404);
    errorOf(await call('DELETE', `/v1/crm/tasks/${task.id}`), 404);
    errorOf(await call('PATCH', `/v1/crm/tasks/${task.id}`, { completed: true }), 404);
  });

  test('list filters: status, assignee_user_id, due_before; newest first; pages', async () => {
    const fresh = await createTenant(t.app);
    const freshCall = caller(t.app, fresh.client);
    const alice = '0191d3a0-0000-7000-8000-00000000a11c';
    const bob = '0191d3a0-0000-7000-8000-000000000b0b';
    const a = await createTask(
      { title: 'a', assignee_user_id: alice, due_at: '2030-01-01T00:00:00Z' },
      freshCall,
    );
    const b = await createTask(
      { title: 'b', assignee_user_id: bob, due_at: '2030-02-01T00:00:00Z' },
      freshCall,
    );
    const c = await createTask({ title: 'c', assignee_user_id: alice, status: 'completed' }, freshCall);
    const d = await createTask(
      { title: 'd', status: 'in_progress', due_at: '2029-06-01T00:00:00Z' },
      freshCall,
    );
    const titles = async (query: string) =>
      (await freshCall('GET', `/v1/crm/tasks${query}`)).json().data.map((task: any) => task.title);
    assert.deepEqual(await titles(''), ['d', 'c', 'b', 'a']);
    assert.deepEqual(await titles('?status=open'), ['b', 'a']);
    assert.deepEqual(await titles('?status=completed'), ['c']);
    assert.deepEqual(await titles('?status=in_progress'), ['d']);
    assert.deepEqual(await titles(`?assignee_user_id=${alice}`), ['c', 'a']);
    assert.deepEqual(await titles('?due_before=2030-01-15T00:00:00Z'), ['d', 'a']);
    assert.deepEqual(await titles('?due_before=2030-01-01T00:00:00Z'), ['d'], 'strictly before');
    assert.deepEqual(await titles(`?due_before=2031-01-01T00:00:00Z&assignee_user_id=${alice}&status=open`), [
      'a',
    ]);

    const first = (await freshCall('GET', '/v1/crm/tasks?limit=3')).json();
    const second = (
      await freshCall('GET', `/v1/crm/tasks?limit=3&page_token=${first.next_page_token}`)
    ).json();
    assert.equal(second.next_page_token, null);
    assert.deepEqual(
      [...first.data, ...second.data].map((task: any) => task.id),
      [d.id, c.id, b.id, a.id],
    );
  });

  test('bad input is a 400 envelope, never a 500', async () => {
    const task = await createTask({ title: 'Target' });
    const bodies: [string, unknown][] = [
      ['no title', { body: 'x' }],
      ['title empty', { title: '' }],
      ['title an object', { title: { text: 'x' } }],
      ['title too long', { title: 'x'.repeat(501) }],
      ['body too long', { title: 'x', body: 'x'.repeat(65_537) }],
      ['priority unknown', { title: 'x', priority: 'critical' }],
      ['status unknown', { title: 'x', status: 'done' }],
      ['task_type with spaces', { title: 'x', task_type: 'Call Back' }],
      ['task_type too long', { title: 'x', task_type: 'x'.repeat(51) }],
      ['assignee not a uuid', { title: 'x', assignee_user_id: 'alice' }],
      ['deal_id not a uuid', { title: 'x', deal_id: 'abc' }],
      ['due_at not a time', { title: 'x', due_at: 'tomorrow' }],
      ['due_at a number', { title: 'x', due_at: 1700000000 }],
      ['completed on create', { title: 'x', completed: true }],
      ['unknown field', { title: 'x', reminder: '1h' }],
    ];
    for (const [label, body] of bodies) {
      const error = errorOf(await call('POST', '/v1/crm/tasks', body), 400);
      assert.equal(error.error, 'validation_error', label);
    }
    const patches: [string, unknown][] = [
      ['completed a word', { completed: 'definitely' }],
      ['title null', { title: null }],
      ['status unknown', { status: 'archived' }],
      ['reminded_at is not writable', { reminded_at: null }],
    ];
    for (const [label, body] of patches) {
      const error = errorOf(await call('PATCH', `/v1/crm/tasks/${task.id}`, body), 400);
      assert.equal(error.error, 'validation_error', label);
    }
    for (const url of [
      '/v1/crm/tasks/nope',
      '/v1/crm/tasks?status=done',
      '/v1/crm/tasks?assignee_user_id=alice',
      '/v1/crm/tasks?due_before=soon',
      '/v1/crm/tasks?limit=abc',
      '/v1/crm/tasks?page_token=x',
      '/v1/crm/tasks?owner=me',
    ]) {
      errorOf(await call('GET', url), 400);
    }
    errorOf(await call('DELETE', '/v1/crm/tasks/nope'), 400);
  });

  test('the due-soon job emits task.due_soon exactly once per task entering its window', async () => {
    const fresh = await createTenant(t.app);
    const freshCall = caller(t.app, fresh.client);
    const soon = await createTask({ title: 'soon', due_at: minutesFromNow(30) }, freshCall);
    const later = await createTask({ title: 'later', due_at: minutesFromNow(120) }, freshCall);
    const longOverdue = await createTask(
      { title: 'overdue', due_at: minutesFromNow(-2 * 24 * 60) },
      freshCall,
    );
    const done = await createTask(
      { title: 'done', due_at: minutesFromNow(10), status: 'completed' },
      freshCall,
    );
    const cancelled = await createTask(
      { title: 'cancelled', due_at: minutesFromNow(10), status: 'cancelled' },
      freshCall,
    );
    const inProgress = await createTask(
      { title: 'in progress', due_at: minutesFromNow(59), status: 'in_progress' },
      freshCall,
    );
    await createTask({ title: 'no due date' }, freshCall);

    await sendDueSoonReminders(t.platform.db, 60);
    const remindedIds = async () =>
      (await eventsOfType(t.app, fresh.client, 'task.due_soon')).map((e) => e.data.id).sort();
    assert.deepEqual(await remindedIds(), [soon.id, inProgress.id].sort());
    const event = (await eventsOfType(t.app, fresh.client, 'task.due_soon')).find(
      (e) => e.data.id === soon.id,
    );
    const reread = (await freshCall('GET', `/v1/crm/tasks/${soon.id}`)).json().task;
    assert.ok(reread.reminded_at);
    assert.deepEqual(event.data, { ...reread, reminder_minutes: 60 });

    await sendDueSoonReminders(t.platform.db, 60);
    assert.deepEqual(await remindedIds(), [soon.id, inProgress.id].sort(), 'a second run emits nothing');

    // An hour later the "later" task enters its window.
    await sendDueSoonReminders(t.platform.db, 60, new Date(Date.now() + 61 * 60_000));
    assert.deepEqual(await remindedIds(), [soon.id, later.id, inProgress.id].sort());
    for (const id of [longOverdue.id, done.id, cancelled.id]) {
      assert.equal((await freshCall('GET', `/v1/crm/tasks/${id}`)).json().task.reminded_at, null);
    }

    // A new due time re-arms the reminder for that time.
    const moved = (
      await freshCall('PATCH', `/v1/crm/tasks/${soon.id}`, { due_at: minutesFromNow(45) })
    ).json().task;
    assert.equal(moved.reminded_at, null);
    await sendDueSoonReminders(t.platform.db, 60);
    const soonEvents = (await eventsOfType(t.app, fresh.client, 'task.due_soon')).filter(
      (e) => e.data.id === soon.id,
    );
    assert.equal(soonEvents.length, 2);
    assert.equal(soonEvents[1].data.due_at, moved.due_at);
  });

  test('concurrent job runs remind each task once', async () => {
    const fresh = await createTenant(t.app);
    const freshCall = caller(t.app, fresh.client);
    const tasks = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        createTask({ title: `bulk ${i}`, due_at: minutesFromNow(5 + (i % 50)) }, freshCall),
      ),
    );
    const counts = await Promise.all(
      Array.from({ length: 6 }, () => sendDueSoonReminders(t.platform.db, 60)),
    );
    assert.equal(
      counts.reduce((sum, n) => sum + n, 0),
      tasks.length,
    );
    const events = await eventsOfType(t.app, fresh.client, 'task.due_soon');
    assert.equal(events.length, tasks.length);
    assert.equal(new Set(events.map((e) => e.data.id)).size, tasks.length);
  });
});

describe('task reminders through the worker', () => {
  let t: TestApp;
  let tenant: TestTenant;

  before(async () => {
    t = await buildTestApp({ TASK_REMINDER_MINUTES: '5' });
    tenant = await createTenant(t.app);
  });
  after(() => t.close());

  test('task_reminders is a cron task of the worker, runs with TASK_REMINDER_MINUTES', async () => {
    const registry = jobRegistry(t.platform);
    assert.ok(registry.tasks[TASK_REMINDERS_TASK]);
    assert.ok(registry.crontab.includes(`* * * * * ${TASK_REMINDERS_TASK}`), 'every minute');

    const call = caller(t.app, tenant.agency);
    const inWindow = (
      await call('POST', '/v1/crm/tasks', { title: 'in 3 min', due_at: minutesFromNow(3) })
    ).json().task;
    const outside = (
      await call('POST', '/v1/crm/tasks', { title: 'in 30 min', due_at: minutesFromNow(30) })
    ).json().task;

    await t.startWorker();
    await t.database.pool.query(`SELECT graphile_worker.add_job($1, '{"untrusted": [1]}'::json)`, [
      TASK_REMINDERS_TASK,
    ]);
    const events = await eventually(async () => {
      const found = await eventsOfType(t.app, tenant.agency, 'task.due_soon');
      return found.length > 0 ? found : undefined;
    });
    assert.deepEqual(
      events.map((e) => e.data.id),
      [inWindow.id],
    );
    assert.equal(events[0].data.reminder_minutes, 5);
    const outsideNow = (await call('GET', `/v1/crm/tasks/${outside.id}`)).json().task;
    assert.equal(outsideNow.reminded_at, null);

    await t.database.pool.query('SELECT graphile_worker.add_job($1)', [TASK_REMINDERS_TASK]);
    await eventually(async () => {
      const { rows } = await t.database.pool.query(
        'SELECT count(*)::int AS n FROM graphile_worker.jobs WHERE task_identifier = $1',
        [TASK_REMINDERS_TASK],
      );
      return rows[0].n === 0;
    });
    assert.equal((await eventsOfType(t.app, tenant.agency, 'task.due_soon')).length, 1, 'still once');
  });
});
