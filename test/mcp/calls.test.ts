import assert from 'node:assert/strict';
import { after, before, describe, type TestContext, test } from 'node:test';
import { createTenant, type TestApp, type TestTenant } from '../helpers.ts';
import { connect, type Era, resultBody, startMcpApp } from './support.ts';

describe('MCP tool calls run the REST routes', () => {
  let t: TestApp;
  let endpoint: string;
  let tenant: TestTenant;
  let other: TestTenant;
  let operations: Set<string>;

  before(async () => {
    ({ t, endpoint } = await startMcpApp());
    tenant = await createTenant(t.app);
    other = await createTenant(t.app);
    const document = t.app.swagger() as { paths: Record<string, Record<string, { operationId?: string }>> };
    operations = new Set(
      Object.values(document.paths).flatMap((item) =>
        Object.values(item).map((operation) => operation.operationId ?? ''),
      ),
    );
  });
  after(() => t.close());

  /** A connected client for the test, closed when it ends. */
  const clientFor = async (context: TestContext, headers: Record<string, string>, era: Era = 'legacy') => {
    const client = await connect(era, endpoint, headers);
    context.after(() => client.close());
    return client;
  };

  for (const era of ['legacy', 'modern'] as Era[]) {
    test(`${era} era: a creating tool with idempotency_key creates once and replays`, async (context) => {
      const client = await clientFor(context, tenant.agencyAsClient, era);
      const args = { name: `widget-${era}`, size: 3, idempotency_key: `key-${era}` };
      const first = await client.callTool({ name: 'testkit.widgets.create', arguments: args });
      const second = await client.callTool({ name: 'testkit.widgets.create', arguments: args });
      assert.equal(first.isError, undefined);
      const { widget } = resultBody(first);
      assert.equal(widget.name, `widget-${era}`);
      assert.equal(widget.size, 3);
      assert.deepEqual(first.structuredContent, { widget });
      assert.deepEqual(resultBody(second), { widget }, 'the replay returns the first result');

      const reused = await client.callTool({
        name: 'testkit.widgets.create',
        arguments: { ...args, name: 'something else' },
      });
      assert.equal(reused.isError, true);
      assert.equal(reused.structuredContent.error, 'idempotency_key_reused');

      const list = resultBody(await client.callTool({ name: 'testkit.widgets.list', arguments: {} }));
      assert.equal(list.data.filter((item: { name: string }) => item.name === `widget-${era}`).length, 1);
    });
  }

  test('list tools take limit and page_token and return next_page_token', async (context) => {
    const client = await clientFor(context, tenant.agency);
    for (const name of ['a', 'b', 'c']) {
      await client.callTool({ name: 'testkit.widgets.create', arguments: { name } });
    }
    const first = resultBody(
      await client.callTool({ name: 'testkit.widgets.list', arguments: { limit: 2 } }),
    );
    assert.deepEqual(
      first.data.map((widget: { name: string }) => widget.name),
      ['c', 'b'],
    );
    assert.equal(first.limit, 2);
    assert.equal(typeof first.next_page_token, 'string');
    const second = resultBody(
      await client.callTool({
        name: 'testkit.widgets.list',
        arguments: { limit: 2, page_token: first.next_page_token },
      }),
    );
    assert.deepEqual(
      second.data.map((widget: { name: string }) => widget.name),
      ['a'],
    );
    assert.equal(second.next_page_token, null);
  });

  test('a validation failure is isError with the REST validation_error body', async (context) => {
    const client = await clientFor(context, tenant.agency);
    const empty = await client.callTool({ name: 'testkit.widgets.create', arguments: { name: '' } });
    assert.equal(empty.isError, true);
    const body = resultBody(empty);
    assert.equal(body.error, 'validation_error');
    assert.deepEqual(
      body.details.fields.map((field: { field: string }) => field.field),
      ['name'],
    );
    assert.deepEqual(empty.structuredContent, body);

    const unknown = await client.callTool({
      name: 'testkit.widgets.create',
      arguments: { name: 'x', colour: 'red' },
    });
    assert.equal(unknown.isError, true);
    assert.equal(resultBody(unknown).error, 'validation_error');
    assert.match(resultBody(unknown).message, /colour/);

    const badQuery = await client.callTool({ name: 'events.list', arguments: { limit: 500 } });
    assert.equal(resultBody(badQuery).error, 'validation_error');

    const badId = await client.callTool({ name: 'events.get', arguments: { id: 'not-an-event' } });
    assert.equal(badId.isError, true);
    assert.equal(resultBody(badId).error, 'validation_error');

    const missingId = await client.callTool({ name: 'testkit.widgets.get', arguments: {} });
    assert.equal(missingId.isError, true);
    assert.deepEqual(resultBody(missingId).details.fields, [{ field: 'id', message: 'is required' }]);

    const badPageToken = await client.callTool({
      name: 'testkit.widgets.list',
      arguments: { page_token: 'forged' },
    });
    assert.equal(badPageToken.isError, true);
    assert.equal(resultBody(badPageToken).error, 'invalid_request');
  });

  test("another tenant's id is isError not_found, for reads, writes and deletes", async (context) => {
    const mine = await clientFor(context, tenant.agency);
    const theirs = await clientFor(context, other.agency);
    const { widget } = resultBody(
      await mine.callTool({ name: 'testkit.widgets.create', arguments: { name: 'private' } }),
    );
    for (const [name, args] of [
      ['testkit.widgets.get', { id: widget.id }],
      ['testkit.widgets.replace', { id: widget.id, name: 'stolen', size: 1 }],
      ['testkit.widgets.delete', { id: widget.id }],
    ] as const) {
      const result = await theirs.callTool({ name, arguments: args });
      assert.equal(result.isError, true, name);
      assert.equal(resultBody(result).error, 'not_found', name);
    }
    assert.equal(
      resultBody(await mine.callTool({ name: 'testkit.widgets.get', arguments: { id: widget.id } })).widget
        .name,
      'private',
    );
    const asClient = await clientFor(context, tenant.agencyAsClient);
    const result = await asClient.callTool({ name: 'testkit.widgets.get', arguments: { id: widget.id } });
    assert.equal(resultBody(result).error, 'not_found', 'another client of the same org is another tenant');
  });

  test('PUT and DELETE tools; a 204 comes back as a text note without structured content', async (context) => {
    const client = await clientFor(context, tenant.client);
    const { widget } = resultBody(
      await client.callTool({ name: 'testkit.widgets.create', arguments: { name: 'old' } }),
    );
    const replaced = await client.callTool({
      name: 'testkit.widgets.replace',
      arguments: { id: widget.id, name: 'new', size: 9 },
    });
    assert.deepEqual(resultBody(replaced).widget, { id: widget.id, name: 'new', size: 9 });

    const deleted = await client.callTool({ name: 'testkit.widgets.delete', arguments: { id: widget.id } });
    assert.equal(deleted.isError, undefined);
    assert.equal(deleted.structuredContent, undefined);
    assert.match(deleted.content[0].text, new RegExp(`DELETE /v1/testkit/widgets/${widget.id} answered 204`));
    const gone = await client.callTool({ name: 'testkit.widgets.get', arguments: { id: widget.id } });
    assert.equal(resultBody(gone).error, 'not_found');
  });

  test('CRM: create a contact, then list and see it; isError for bad input and for another tenant', async (context) => {
    if (!operations.has('crm.contacts.create') || !operations.has('crm.contacts.list')) {
      context.skip(
        'crm.contacts.create/list are not in this build yet (the contacts module is merged separately)',
      );
      return;
    }
    const client = await clientFor(context, tenant.agency);
    const email = `ada-${Date.now()}@example.com`;
    const created = await client.callTool({
      name: 'crm.contacts.create',
      arguments: { email, first_name: 'Ada', last_name: 'Lovelace', idempotency_key: `contact-${email}` },
    });
    assert.equal(created.isError, undefined, created.content[0].text);
    const { contact } = resultBody(created);
    assert.equal(contact.first_name, 'Ada');

    const list = resultBody(await client.callTool({ name: 'crm.contacts.list', arguments: { limit: 200 } }));
    assert.ok(list.data.some((item: { id: string }) => item.id === contact.id));

    const invalid = await client.callTool({
      name: 'crm.contacts.create',
      arguments: { email: 'not-an-email' },
    });
    assert.equal(invalid.isError, true);
    assert.equal(resultBody(invalid).error, 'validation_error');

    const stranger = await clientFor(context, other.agency);
    const foreign = await stranger.callTool({ name: 'crm.contacts.get', arguments: { id: contact.id } });
    assert.equal(foreign.isError, true);
    assert.equal(resultBody(foreign).error, 'not_found');
    const foreignList = resultBody(await stranger.callTool({ name: 'crm.contacts.list', arguments: {} }));
    assert.ok(!foreignList.data.some((item: { id: string }) => item.id === contact.id));
  });

  test('docs: the five docs tools exist under the spec names and work with any valid key', async (context) => {
    if (![...operations].some((operation) => operation.startsWith('docs.'))) {
      context.skip('no docs.* operation in this build yet (the public docs API is merged separately)');
      return;
    }
    const client = await clientFor(context, tenant.client, 'modern');
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    for (const name of ['docs.products', 'docs.list', 'docs.get', 'docs.search', 'docs.changelog']) {
      assert.ok(names.includes(name), `${name} is a tool`);
    }
    const products = resultBody(await client.callTool({ name: 'docs.products', arguments: {} }));
    assert.ok(Array.isArray(products.data));
    const search = await client.callTool({ name: 'docs.search', arguments: { q: 'mcp' } });
    assert.equal(search.isError, undefined, search.content[0].text);
    const found = resultBody(search);
    assert.equal(found.query, 'mcp');
    assert.equal(typeof found.count, 'number');
    assert.ok(found.data.length > 0, 'the MCP pages are found');
    const invalid = await client.callTool({ name: 'docs.search', arguments: {} });
    assert.equal(invalid.isError, true);
    assert.equal(resultBody(invalid).error, 'validation_error');
  });
});
