import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { CreateApiKeyBody } from '../../modules/clients/schemas.ts';
import {
  getApiKey,
  listApiKeys,
  type managedApiKey,
  mintKey,
  revokeKey,
} from '../../modules/clients/service.ts';
import { inTransaction } from '../../platform/db/transaction.ts';
import { errors } from '../../platform/http/errors.ts';
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
import { formHandler, text } from '../forms.ts';
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

type ApiKey = ReturnType<typeof managedApiKey>;

/** Whose keys a page shows: the agency's own (`/portal/keys`) or one client's. */
interface KeyArea {
  base: string;
  kind: 'agency' | 'client';
  scope: PortalScope;
  clientName?: string;
}

async function areaOf(request: FastifyRequest): Promise<KeyArea> {
  const { clientId } = request.params as { clientId?: string };
  if (clientId === undefined)
    return { base: '/portal/keys', kind: 'agency', scope: agencyScope(request, MANAGERS) };
  const client = await clientArea(request, clientId);
  return { base: `${client.base}/keys`, kind: 'client', scope: client.scope, clientName: client.name };
}

function KeysPage(props: {
  ctx: PortalContext;
  area: KeyArea;
  keys: ApiKey[];
  next: string | null;
  form: FormState;
  created?: { key: string; api_key: ApiKey };
  notice?: string;
}) {
  const { area, ctx } = props;
  const agency = area.kind === 'agency';
  return (
    <Layout ctx={ctx} title="API keys">
      <PageHead
        title={agency ? 'Agency API keys' : 'API keys'}
        sub={
          agency
            ? 'gc_live_ keys act for the whole agency, and as any client with X-Service-Client-Id.'
            : 'cl_live_ keys act on this client only.'
        }
        crumbs={!agency && <a href={`/portal/clients/${area.scope.clientId}`}>{area.clientName}</a>}
      />
      {props.notice === 'revoked' && (
        <Notice kind="ok">The key is revoked: it is refused from now on.</Notice>
      )}
      {props.created && (
        <OnceShown
          title={`Your new key “${props.created.api_key.name}”`}
          id="new-key"
          secret={props.created.key}
        >
          Store it in your secrets manager; the portal keeps only its last four characters.
        </OnceShown>
      )}
      <Panel title="Keys in use">
        <Table
          label="API keys"
          head={[
            'Name',
            'Key',
            'Kind',
            'Created',
            'Last used',
            'Expires',
            { label: 'Actions', hidden: true },
          ]}
          rows={props.keys.map((key) => (
            <tr>
              <td>{key.name}</td>
              <td>
                <code>{`${key.prefix}…${key.last4}`}</code>
              </td>
              <td>
                <Badge kind={key.kind === 'agency' ? 'brand' : undefined}>{key.kind}</Badge>
              </td>
              <td>
                <When at={key.created_at} />
              </td>
              <td>
                <When at={key.last_used_at} never="Never" />
              </td>
              <td>
                <When at={key.expires_at} never="Never" />
              </td>
              <td class="actions">
                <ActionButton
                  ctx={ctx}
                  action={`${area.base}/${key.id}/revoke`}
                  label="Revoke"
                  kind="danger"
                  small
                  confirm={`Revoke “${key.name}”? Every request with it is refused from now on.`}
                />
              </td>
            </tr>
          ))}
          empty={
            <Empty title="No keys yet">
              <p>Create a key below to call the API.</p>
            </Empty>
          }
        />
        <Pager path={area.base} next={props.next} />
      </Panel>
      <Panel title="Create key">
        <PostForm ctx={ctx} action={area.base} class="stack" label="Create key">
          <FormError form={props.form} />
          <Field form={props.form} name="name" label="Name" placeholder="Production server" />
          <Field
            form={props.form}
            name="expires_on"
            label="Expires on"
            type="date"
            help="Optional: it stops working at the end of that day (UTC)."
          />
          <Field
            form={props.form}
            name="rate_limit_per_minute"
            label="Rate limit per minute"
            type="number"
            min={1}
            help="Optional: 60 when empty."
          />
          <div>
            <button type="submit">Create key</button>
          </div>
        </PostForm>
      </Panel>
    </Layout>
  );
}

/** The form's fields as the API's body: numbers as numbers, a day as the end of it. */
function keyBody(area: KeyArea, values: FormState['values']) {
  const limit = text(values, 'rate_limit_per_minute');
  const day = text(values, 'expires_on');
  return checkBody(CreateApiKeyBody, {
    name: text(values, 'name'),
    kind: area.kind,
    ...(area.kind === 'client' ? { client_id: area.scope.clientId } : {}),
    ...(limit ? { rate_limit_per_minute: /^\d+$/.test(limit) ? Number(limit) : limit } : {}),
    ...(day ? { expires_at: /^\d{4}-\d{2}-\d{2}$/.test(day) ? `${day}T23:59:59Z` : day } : {}),
  });
}

/** API keys: the agency's at /portal/keys (owners and admins), a client's in its area. */
export const keyPages: FastifyPluginAsync = async (app) => {
  const { db, keys } = app.platform;

  const show = async (
    request: FastifyRequest,
    reply: FastifyReply,
    form: FormState,
    status = 200,
    created?: { key: string; api_key: ApiKey },
  ) => {
    const area = await areaOf(request);
    const clientId = area.kind === 'agency' ? null : area.scope.clientId;
    const { rows, next } = pageOf(
      await listApiKeys(db, area.scope.orgId, pageAfter(request.query), { client_id: clientId }),
    );
    return sendPage(
      reply,
      <KeysPage
        ctx={request.portal}
        area={area}
        keys={rows}
        next={next}
        form={form}
        created={created}
        notice={queryText(request.query, 'notice')}
      />,
      status,
    );
  };

  for (const base of ['/keys', '/clients/:clientId/keys']) {
    app.get(base, (request, reply) => show(request, reply, emptyForm));

    app.post(
      base,
      formHandler({
        show,
        fieldNames: { expires_at: 'expires_on' },
        act: async (request, reply, values) => {
          const area = await areaOf(request);
          const body = keyBody(area, values);
          const created = await inTransaction(db, (trx) =>
            mintKey(trx, area.scope.orgId, body, auditOf(request)),
          );
          return show(request, reply, emptyForm, 201, created);
        },
      }),
    );

    app.post(
      `${base}/:id/revoke`,
      formHandler({
        show,
        act: async (request, reply) => {
          const area = await areaOf(request);
          const id = idParam(request);
          // A key of another area (an agency key from a client's page) is not found, as another org's is.
          const key = await getApiKey(db, area.scope.orgId, id);
          if (key.client_id !== (area.kind === 'agency' ? null : area.scope.clientId))
            throw errors.notFound('API key', id);
          await inTransaction(db, (trx) => revokeKey(trx, area.scope.orgId, id, auditOf(request)));
          keys.evict(id);
          return redirectTo(reply, area.base, 'revoked');
        },
      }),
    );
  }
};
