import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { CreateWebhookBody, RecoverBody } from '../../modules/webhooks/schemas.ts';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  recoverWebhook,
  retryDelivery,
  revealSecret,
  searchDeliveryAttempts,
  searchWebhooks,
  sendTestEvent,
  type toDeliveryAttempt,
  type toWebhook,
  updateWebhook,
} from '../../modules/webhooks/service.ts';
import type { AttemptStatus } from '../../modules/webhooks/store.ts';
import { inTransaction } from '../../platform/db/transaction.ts';
import { EVENT_TYPES } from '../../platform/events/catalog.ts';
import { checkBody } from '../../platform/http/validation.ts';
import {
  agencyScope,
  auditOf,
  clientArea,
  idParam,
  MANAGERS,
  type PortalContext,
  type PortalScope,
} from '../context.ts';
import { formHandler, list, text } from '../forms.ts';
import { Layout } from '../layout.tsx';
import { pageAfter, pageOf, queryText } from '../paging.ts';
import { redirectTo, sendPage } from '../render.tsx';
import {
  ActionButton,
  Badge,
  Empty,
  emptyForm,
  Field,
  FormError,
  type FormState,
  Notice,
  OnceShown,
  PageHead,
  Pager,
  Panel,
  PostForm,
  Table,
  When,
} from '../ui.tsx';

type Webhook = ReturnType<typeof toWebhook>;
type Attempt = ReturnType<typeof toDeliveryAttempt>;

const STATUSES: AttemptStatus[] = ['succeeded', 'failed', 'retrying', 'dead_letter', 'skipped'];
const NOTICES: Record<string, string> = {
  test_sent: 'A webhook.test event is on its way; its delivery shows in the log below.',
  enabled: 'The endpoint is enabled again and its failure counter is reset.',
  disabled: 'The endpoint is disabled: no event is sent to it until it is enabled again.',
  retried: 'The delivery is sent again now; refresh the log to see the attempt.',
  deleted: 'The endpoint and its delivery log were deleted.',
};

function noticeText(notice: string): string | undefined {
  const recovered = /^recovered_(\d+)$/.exec(notice);
  if (recovered)
    return `${recovered[1]} ${recovered[1] === '1' ? 'delivery was' : 'deliveries were'} put back on a fresh schedule.`;
  return NOTICES[notice];
}

/** Where a webhook area lives: the agency's (`/portal/webhooks`) or a client's. */
interface Area {
  base: string;
  title: string;
  crumbs?: { href: string; label: string };
  scope: PortalScope;
}

async function areaOf(request: FastifyRequest): Promise<Area> {
  const { clientId } = request.params as { clientId?: string };
  if (clientId === undefined) {
    return { base: '/portal/webhooks', title: 'Webhooks', scope: agencyScope(request, MANAGERS) };
  }
  const client = await clientArea(request, clientId);
  return {
    base: `${client.base}/webhooks`,
    title: 'Webhooks',
    crumbs: { href: client.base, label: client.name },
    scope: client.scope,
  };
}

function rulesOf(request: FastifyRequest) {
  const { secrets, config } = request.server.platform;
  return { encryptionKey: secrets.encryptionKey, allowPrivate: config.outboundAllowPrivate };
}

function healthBadge(webhook: Webhook) {
  if (!webhook.active) return <Badge kind="bad">Disabled</Badge>;
  if (webhook.consecutive_failures > 0)
    return <Badge kind="warn">{`Failing (${webhook.consecutive_failures})`}</Badge>;
  return <Badge kind="ok">Active</Badge>;
}

function EventsPicker(props: { form: FormState }) {
  const chosen = new Set(list(props.form.values, 'events'));
  const error = props.form.errors.events;
  return (
    <fieldset aria-describedby={error ? 'events-error' : undefined}>
      <legend>Events</legend>
      <div class="checks">
        <label>
          <input type="checkbox" name="events" value="*" checked={chosen.has('*')} />
          <strong>All events</strong>
        </label>
        {EVENT_TYPES.map((name) => (
          <label>
            <input type="checkbox" name="events" value={name} checked={chosen.has(name)} />
            <code>{name}</code>
          </label>
        ))}
      </div>
      {error && (
        <span class="error" id="events-error">
          {error}
        </span>
      )}
    </fieldset>
  );
}

function WebhooksPage(props: {
  ctx: PortalContext;
  area: Area;
  webhooks: Webhook[];
  next: string | null;
  form: FormState;
  created?: { webhook: Webhook; secret: string };
}) {
  const { area } = props;
  return (
    <Layout ctx={props.ctx} title={area.title}>
      <PageHead
        title={area.title}
        sub="Endpoints that receive events, signed with their own secret."
        crumbs={area.crumbs && <a href={area.crumbs.href}>{area.crumbs.label}</a>}
      />
      {props.created && (
        <OnceShown title="Signing secret" id="created-secret" secret={props.created.secret}>
          Verify the X-Service-Signature header of every delivery to {props.created.webhook.url} with it.
        </OnceShown>
      )}
      <Panel title="Endpoints">
        <Table
          label="Webhook endpoints"
          head={['URL', 'Events', 'Status', 'Created']}
          rows={props.webhooks.map((webhook) => (
            <tr>
              <td>
                <a href={`${area.base}/${webhook.id}`}>{webhook.url}</a>
                {webhook.description && <div class="muted small">{webhook.description}</div>}
              </td>
              <td class="small">{webhook.events.includes('*') ? 'All events' : webhook.events.join(', ')}</td>
              <td>{healthBadge(webhook)}</td>
              <td>
                <When at={webhook.created_at} />
              </td>
            </tr>
          ))}
          empty={
            <Empty title="No endpoints yet">
              <p>Add an endpoint below to receive events as they happen.</p>
            </Empty>
          }
        />
        <Pager path={area.base} next={props.next} />
      </Panel>
      <Panel title="Add endpoint">
        <PostForm ctx={props.ctx} action={area.base} class="stack" label="Add endpoint">
          <FormError form={props.form} />
          <Field
            form={props.form}
            name="url"
            label="Endpoint URL"
            type="url"
            placeholder="https://example.com/hooks"
          />
          <EventsPicker form={props.form} />
          <Field
            form={props.form}
            name="description"
            label="Description"
            help="Optional: what this endpoint is for."
          />
          <div>
            <button type="submit">Add endpoint</button>
          </div>
        </PostForm>
      </Panel>
    </Layout>
  );
}

function statusBadge(status: AttemptStatus) {
  const kind = status === 'succeeded' ? 'ok' : status === 'retrying' || status === 'skipped' ? 'warn' : 'bad';
  return <Badge kind={kind}>{status.replace('_', ' ')}</Badge>;
}

function WebhookPage(props: {
  ctx: PortalContext;
  area: Area;
  webhook: Webhook;
  attempts: Attempt[];
  next: string | null;
  status?: string;
  notice?: string;
  secret?: string;
  recover: FormState;
}) {
  const { area, webhook, ctx } = props;
  const base = `${area.base}/${webhook.id}`;
  return (
    <Layout ctx={ctx} title={`Webhook ${webhook.url}`}>
      <PageHead
        title={webhook.url}
        sub={webhook.description ?? undefined}
        crumbs={<a href={area.base}>Webhooks</a>}
      >
        {healthBadge(webhook)}
      </PageHead>
      {props.notice && noticeText(props.notice) && <Notice kind="ok">{noticeText(props.notice)}</Notice>}
      {props.secret && (
        <OnceShown title="New signing secret" id="rotated-secret" secret={props.secret}>
          The previous secret no longer signs deliveries.
        </OnceShown>
      )}
      <div class="grid-2">
        <Panel title="Endpoint">
          <dl class="facts">
            <dt>Events</dt>
            <dd>{webhook.events.includes('*') ? 'All events' : webhook.events.join(', ')}</dd>
            <dt>Scope</dt>
            <dd>{webhook.client_id ? 'One client' : 'Every client of the agency'}</dd>
            <dt>Secret</dt>
            <dd>
              <code>{`whsec_…${webhook.secret_last4}`}</code>
            </dd>
            <dt>Failures in a row</dt>
            <dd>{webhook.consecutive_failures}</dd>
            <dt>Disabled</dt>
            <dd>
              <When at={webhook.disabled_at} never="No" />
            </dd>
          </dl>
        </Panel>
        <Panel title="Actions">
          <div class="inline-actions">
            <ActionButton ctx={ctx} action={`${base}/test`} label="Send test event" />{' '}
            <ActionButton
              ctx={ctx}
              action={`${base}/rotate`}
              label="Rotate secret"
              kind="secondary"
              confirm="Rotate the signing secret? The current one stops working at once."
            />{' '}
            {webhook.active ? (
              <ActionButton
                ctx={ctx}
                action={`${base}/disable`}
                label="Disable"
                kind="secondary"
                confirm="Disable this endpoint? No event is sent to it until it is enabled."
              />
            ) : (
              <ActionButton ctx={ctx} action={`${base}/enable`} label="Enable" kind="secondary" />
            )}{' '}
            <ActionButton
              ctx={ctx}
              action={`${base}/delete`}
              label="Delete"
              kind="danger"
              confirm="Delete this endpoint and its delivery log?"
            />
          </div>
          <h3 class="spaced">Recover</h3>
          <PostForm ctx={ctx} action={`${base}/recover`} class="inline" label="Recover">
            <FormError form={props.recover} />
            <Field
              form={props.recover}
              name="since"
              label="Re-send what failed since (UTC)"
              type="datetime-local"
              help="Up to 14 days back."
            />
            <button type="submit" class="secondary">
              Recover
            </button>
          </PostForm>
        </Panel>
      </div>
      <Panel
        title="Delivery log"
        id="delivery-log"
        refreshMs={5000}
        actions={
          <form method="get" action={base} class="inline" aria-label="Filter deliveries">
            <label for="status-filter" class="sr-only">
              Status
            </label>
            <select id="status-filter" name="status">
              <option value="">All statuses</option>
              {STATUSES.map((status) => (
                <option value={status} selected={props.status === status}>
                  {status.replace('_', ' ')}
                </option>
              ))}
            </select>
            <button type="submit" class="secondary small">
              Filter
            </button>
          </form>
        }
      >
        <Table
          label="Delivery log"
          head={[
            'Event',
            'Status',
            { label: 'Attempt', num: true },
            { label: 'Response', num: true },
            { label: 'Duration', num: true },
            'Time',
            { label: 'Actions', hidden: true },
          ]}
          rows={props.attempts.map((attempt) => (
            <tr>
              <td>
                <code>{attempt.event_type}</code>
                {attempt.error && <div class="muted small">{attempt.error}</div>}
              </td>
              <td>{statusBadge(attempt.status)}</td>
              <td class="num">{attempt.attempt}</td>
              <td class="num">{attempt.response_status ?? '—'}</td>
              <td class="num">{attempt.duration_ms === null ? '—' : `${attempt.duration_ms} ms`}</td>
              <td>
                <When at={attempt.created_at} />
              </td>
              <td class="actions">
                {(attempt.status === 'failed' || attempt.status === 'dead_letter') && webhook.active && (
                  <ActionButton
                    ctx={ctx}
                    action={`${base}/deliveries/${attempt.id}/retry`}
                    label="Retry"
                    kind="secondary"
                    small
                  />
                )}
              </td>
            </tr>
          ))}
          empty={
            <Empty
              title={props.status ? `No ${props.status.replace('_', ' ')} deliveries` : 'No deliveries yet'}
            >
              <p>Send a test event to see one arrive.</p>
            </Empty>
          }
        />
        <Pager path={base} next={props.next} query={{ status: props.status }} />
      </Panel>
    </Layout>
  );
}

/** Webhook endpoints and their delivery log: the agency's at /portal/webhooks, a client's under its area. */
export const webhookPages: FastifyPluginAsync = async (app) => {
  const { db } = app.platform;

  const showList = async (
    request: FastifyRequest,
    reply: FastifyReply,
    form: FormState,
    status = 200,
    created?: { webhook: Webhook; secret: string },
  ) => {
    const area = await areaOf(request);
    const { rows, next } = pageOf(await searchWebhooks(db, area.scope, pageAfter(request.query)));
    return sendPage(
      reply,
      <WebhooksPage
        ctx={request.portal}
        area={area}
        webhooks={rows}
        next={next}
        form={form}
        created={created}
      />,
      status,
    );
  };

  const showOne = async (
    request: FastifyRequest,
    reply: FastifyReply,
    extra: { secret?: string; recover?: FormState; status?: number } = {},
  ) => {
    const area = await areaOf(request);
    const id = idParam(request);
    const webhook = await getWebhook(db, area.scope, id);
    const status = queryText(request.query, 'status');
    const filter = STATUSES.includes(status as AttemptStatus) ? (status as AttemptStatus) : undefined;
    const { rows, next } = pageOf(
      await searchDeliveryAttempts(db, area.scope, id, { status: filter }, pageAfter(request.query)),
    );
    return sendPage(
      reply,
      <WebhookPage
        ctx={request.portal}
        area={area}
        webhook={webhook}
        attempts={rows}
        next={next}
        status={filter}
        notice={queryText(request.query, 'notice')}
        secret={extra.secret}
        recover={extra.recover ?? emptyForm}
      />,
      extra.status ?? 200,
    );
  };

  /** A one-button action on an endpoint, then back to its page with a notice. */
  const action = (
    notice: string,
    act: (request: FastifyRequest, area: Area, id: string) => Promise<unknown>,
  ) =>
    formHandler({
      show: (request, reply, form, status) => showOne(request, reply, { recover: form, status }),
      act: async (request, reply) => {
        const area = await areaOf(request);
        const id = idParam(request);
        await act(request, area, id);
        return redirectTo(reply, notice === 'deleted' ? area.base : `${area.base}/${id}`, notice);
      },
    });

  for (const base of ['/webhooks', '/clients/:clientId/webhooks']) {
    app.get(base, (request, reply) => showList(request, reply, emptyForm));

    app.post(
      base,
      formHandler({
        show: (request, reply, form, status) => showList(request, reply, form, status),
        act: async (request, reply, values) => {
          const area = await areaOf(request);
          const description = text(values, 'description');
          const body = checkBody(CreateWebhookBody, {
            url: text(values, 'url'),
            events: list(values, 'events'),
            ...(description ? { description } : {}),
          });
          const rules = rulesOf(request);
          const created = await inTransaction(db, (trx) =>
            createWebhook(trx, area.scope, body, rules, auditOf(request)),
          );
          const { webhook, secret } = revealSecret(created, rules);
          return showList(request, reply, emptyForm, 201, { webhook, secret });
        },
      }),
    );

    app.get(`${base}/:id`, (request, reply) => showOne(request, reply));

    app.post(
      `${base}/:id/rotate`,
      formHandler({
        show: (request, reply, form, status) => showOne(request, reply, { recover: form, status }),
        act: async (request, reply) => {
          const area = await areaOf(request);
          const id = idParam(request);
          const rotated = await inTransaction(db, (trx) =>
            updateWebhook(trx, area.scope, id, { rotate_secret: true }, rulesOf(request), auditOf(request)),
          );
          return showOne(request, reply, { secret: rotated.secret });
        },
      }),
    );

    app.post(
      `${base}/:id/test`,
      action('test_sent', (_request, area, id) =>
        inTransaction(db, (trx) => sendTestEvent(trx, area.scope, id)),
      ),
    );
    for (const [path, active] of [
      ['enable', true],
      ['disable', false],
    ] as const) {
      app.post(
        `${base}/:id/${path}`,
        action(`${path}d`, (request, area, id) =>
          inTransaction(db, (trx) =>
            updateWebhook(trx, area.scope, id, { active }, rulesOf(request), auditOf(request)),
          ),
        ),
      );
    }
    app.post(
      `${base}/:id/delete`,
      action('deleted', (request, area, id) =>
        inTransaction(db, (trx) => deleteWebhook(trx, area.scope, id, auditOf(request))),
      ),
    );
    app.post(
      `${base}/:id/deliveries/:attemptId/retry`,
      action('retried', (request, area, id) =>
        inTransaction(db, (trx) => retryDelivery(trx, area.scope, id, idParam(request, 'attemptId'))),
      ),
    );

    app.post(
      `${base}/:id/recover`,
      formHandler({
        show: (request, reply, form, status) => showOne(request, reply, { recover: form, status }),
        act: async (request, reply, values) => {
          const area = await areaOf(request);
          const id = idParam(request);
          const since = text(values, 'since');
          const body = checkBody(RecoverBody, {
            since: since && /T\d\d:\d\d$/.test(since) ? `${since}:00Z` : since,
          });
          const { recovery } = await inTransaction(db, (trx) => recoverWebhook(trx, area.scope, id, body));
          return redirectTo(reply, `${area.base}/${id}`, `recovered_${recovery.queued}`);
        },
      }),
    );
  }
};
