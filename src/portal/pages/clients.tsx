import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { CreateClientBody, UpdateClientBody } from '../../modules/clients/schemas.ts';
import { createClient, listClients, type publicClient, updateClient } from '../../modules/clients/service.ts';
import { inTransaction } from '../../platform/db/transaction.ts';
import { checkBody } from '../../platform/http/validation.ts';
import {
  AGENCY_ROLES,
  agencyScope,
  auditOf,
  clientScope,
  type PortalContext,
  requireRole,
} from '../context.ts';
import { formHandler, text } from '../forms.ts';
import { Layout } from '../layout.tsx';
import { pageAfter, pageOf, queryText } from '../paging.ts';
import { redirectTo, sendPage } from '../render.tsx';
import {
  Badge,
  Empty,
  emptyForm,
  Field,
  FormError,
  type FormState,
  PageHead,
  Pager,
  Panel,
  PostForm,
  Table,
  When,
} from '../ui.tsx';
import { ClientOverview, clientOverview } from './client-overview.tsx';

type Client = ReturnType<typeof publicClient>;

function ClientsPage(props: {
  ctx: PortalContext;
  clients: Client[];
  next: string | null;
  search?: string;
  form: FormState;
}) {
  return (
    <Layout ctx={props.ctx} title="Clients">
      <PageHead
        title="Clients"
        sub="The businesses your agency works for; each has its own data, keys and webhooks."
      />
      <div class="grid-2">
        <Panel title="New client">
          <PostForm ctx={props.ctx} action="/portal/clients" class="inline" label="New client">
            <FormError form={props.form} />
            <Field form={props.form} name="name" label="Client name" placeholder="Acme Dental" />
            <button type="submit">New client</button>
          </PostForm>
        </Panel>
        <Panel title="Search">
          <form method="get" action="/portal/clients" class="inline" aria-label="Search clients">
            <div class="field">
              <label for="client-search">Name contains</label>
              <input id="client-search" type="search" name="q" value={props.search ?? ''} />
            </div>
            <button type="submit" class="secondary">
              Search
            </button>
          </form>
        </Panel>
      </div>
      <Panel title={props.search ? `Clients matching “${props.search}”` : 'All clients'}>
        <Table
          label="Clients"
          head={['Name', 'Created']}
          rows={props.clients.map((client) => (
            <tr>
              <td>
                <a href={`/portal/clients/${client.id}`}>{client.name}</a>{' '}
                {client.is_house && <Badge kind="brand">the agency's own</Badge>}
              </td>
              <td>
                <When at={client.created_at} />
              </td>
            </tr>
          ))}
          empty={
            <Empty title={props.search ? 'No client matches' : 'No clients yet'}>
              {props.search ? 'Try another part of the name.' : 'Create your first client above.'}
            </Empty>
          }
        />
        <Pager path="/portal/clients" next={props.next} query={{ q: props.search }} />
      </Panel>
    </Layout>
  );
}

/** Clients: the list with search and New client (agency users), each client's overview and its rename. */
export const clientPages: FastifyPluginAsync = async (app) => {
  const { db } = app.platform;

  const showList = async (request: FastifyRequest, reply: FastifyReply, form: FormState, status = 200) => {
    const scope = agencyScope(request);
    const search = queryText(request.query, 'q')?.slice(0, 200);
    const { rows, next } = pageOf(await listClients(db, scope.orgId, pageAfter(request.query), { search }));
    return sendPage(
      reply,
      <ClientsPage ctx={request.portal} clients={rows} next={next} search={search} form={form} />,
      status,
    );
  };

  app.get('/clients', (request, reply) => showList(request, reply, emptyForm));
  app.post(
    '/clients',
    formHandler({
      show: showList,
      act: async (request, reply, values) => {
        const scope = agencyScope(request);
        const body = checkBody(CreateClientBody, { name: text(values, 'name') });
        const client = await inTransaction(db, (trx) =>
          createClient(trx, scope.orgId, body, auditOf(request)),
        );
        return redirectTo(reply, `/portal/clients/${client.id}`, 'created');
      },
    }),
  );

  const showClient = async (request: FastifyRequest, reply: FastifyReply, form: FormState, status = 200) => {
    const data = await clientOverview(request, (request.params as { clientId: string }).clientId);
    const agencyUser = AGENCY_ROLES.includes(request.portal.viewer!.user.role);
    const rename = {
      values: { name: data.client.name, ...form.values },
      errors: form.errors,
      formError: form.formError,
    };
    return sendPage(
      reply,
      <ClientOverview ctx={request.portal} {...data} notice={queryText(request.query, 'notice')}>
        {agencyUser && (
          <Panel title="Rename">
            <PostForm
              ctx={request.portal}
              action={`/portal/clients/${data.client.id}`}
              class="inline"
              label="Rename"
            >
              <FormError form={rename} />
              <Field form={rename} name="name" label="Client name" />
              <button type="submit" class="secondary">
                Rename
              </button>
            </PostForm>
          </Panel>
        )}
      </ClientOverview>,
      status,
    );
  };

  app.get('/clients/:clientId', (request, reply) => showClient(request, reply, emptyForm));
  app.post(
    '/clients/:clientId',
    formHandler({
      show: showClient,
      act: async (request, reply, values) => {
        requireRole(request, AGENCY_ROLES);
        const scope = await clientScope(request, (request.params as { clientId: string }).clientId);
        const body = checkBody(UpdateClientBody, { name: text(values, 'name') });
        await inTransaction(db, (trx) =>
          updateClient(trx, scope.orgId, scope.clientId, body, auditOf(request)),
        );
        return redirectTo(reply, `/portal/clients/${scope.clientId}`, 'renamed');
      },
    }),
  );
};
