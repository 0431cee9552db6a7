import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { listAudit } from '../../modules/audit/service.ts';
import { listClients } from '../../modules/clients/service.ts';
import { accounts, changeRole, listUsers, type PublicUser, removeUser } from '../../modules/users/service.ts';
import { inTransaction } from '../../platform/db/transaction.ts';
import { auditOf, idParam, MANAGERS, type PortalContext, requireRole } from '../context.ts';
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
  SelectField,
  Table,
  When,
} from '../ui.tsx';

const ROLE_OPTIONS = [
  { value: 'member', label: 'Member: works in the clients' },
  { value: 'admin', label: 'Admin: also keys, webhooks, team, FUEL' },
  { value: 'owner', label: 'Owner: everything' },
  { value: 'client', label: 'Client user: one client only' },
];

const NOTICES: Record<string, string> = {
  role_changed: 'The role is changed.',
  removed: 'The user is removed and signed out everywhere.',
};

function TeamPage(props: {
  ctx: PortalContext;
  users: PublicUser[];
  next: string | null;
  form: FormState;
  notice?: string;
  invited?: { email: string; url: string };
  clients: { id: string; name: string }[];
}) {
  const { ctx } = props;
  const clientName = new Map(props.clients.map((client) => [client.id, client.name]));
  return (
    <Layout ctx={ctx} title="Team">
      <PageHead
        title="Team"
        sub="The people of your agency, and of its clients, who sign in to the portal."
      />
      {props.notice && NOTICES[props.notice] && <Notice kind="ok">{NOTICES[props.notice]}</Notice>}
      {props.invited && (
        <OnceShown
          title={`Invitation sent to ${props.invited.email}`}
          id="invite-url"
          secret={props.invited.url}
        >
          It was emailed too; the link works once, for 7 days.
        </OnceShown>
      )}
      <Panel title="Users">
        <Table
          label="Users"
          head={['Email', 'Role', 'Status', 'Last sign-in', { label: 'Actions', hidden: true }]}
          rows={props.users.map((user) => (
            <tr>
              <td>{user.email}</td>
              <td>
                {user.role === 'client' ? (
                  <>
                    <Badge>client</Badge>{' '}
                    <a href={`/portal/clients/${user.client_id}`}>
                      {clientName.get(user.client_id ?? '') ?? 'client'}
                    </a>
                  </>
                ) : (
                  <PostForm
                    ctx={ctx}
                    action={`/portal/team/${user.id}/role`}
                    class="inline"
                    label={`Change the role of ${user.email}`}
                  >
                    <label class="sr-only" for={`role-${user.id}`}>
                      Role of {user.email}
                    </label>
                    <select id={`role-${user.id}`} name="role">
                      {['owner', 'admin', 'member'].map((role) => (
                        <option value={role} selected={user.role === role}>
                          {role}
                        </option>
                      ))}
                    </select>
                    <button type="submit" class="secondary small">
                      Change
                    </button>
                  </PostForm>
                )}
              </td>
              <td>
                <Badge kind={user.status === 'active' ? 'ok' : user.status === 'invited' ? 'warn' : 'bad'}>
                  {user.status}
                </Badge>
              </td>
              <td>
                <When at={user.last_sign_in_at} never="Never" />
              </td>
              <td class="actions">
                {user.id !== ctx.viewer?.user.id && (
                  <ActionButton
                    ctx={ctx}
                    action={`/portal/team/${user.id}/remove`}
                    label="Remove"
                    kind="danger"
                    small
                    confirm={`Remove ${user.email}? They are signed out at once.`}
                  />
                )}
              </td>
            </tr>
          ))}
          empty={<Empty title="No users yet" />}
        />
        <Pager path="/portal/team" next={props.next} />
      </Panel>
      <Panel title="Invite someone">
        <PostForm ctx={ctx} action="/portal/team" class="stack" label="Invite someone">
          <FormError form={props.form} />
          <Field form={props.form} name="email" label="Email" type="email" />
          <SelectField form={props.form} name="role" label="Role" options={ROLE_OPTIONS} />
          <SelectField
            form={props.form}
            name="client_id"
            label="Client (for a client user)"
            options={[
              { value: '', label: '—' },
              ...props.clients.map((client) => ({ value: client.id, label: client.name })),
            ]}
          />
          <div>
            <button type="submit">Send invitation</button>
          </div>
        </PostForm>
      </Panel>
    </Layout>
  );
}

function AuditPage(props: {
  ctx: PortalContext;
  entries: Awaited<ReturnType<typeof listAudit>>;
  next: string | null;
  action?: string;
}) {
  return (
    <Layout ctx={props.ctx} title="Audit log">
      <PageHead
        title="Audit log"
        sub="Every change to keys, clients, users and webhooks, made here, through the API or by the operator."
      />
      <Panel
        title="Changes"
        actions={
          <form method="get" action="/portal/audit" class="inline" aria-label="Filter the audit log">
            <label class="sr-only" for="audit-action">
              Action
            </label>
            <input
              id="audit-action"
              name="action"
              value={props.action ?? ''}
              placeholder="e.g. api_key.revoked"
            />
            <button type="submit" class="secondary small">
              Filter
            </button>
          </form>
        }
      >
        <Table
          label="Audit log"
          head={['Time', 'Who', 'What', 'Record', 'From']}
          rows={props.entries.map((entry) => (
            <tr>
              <td>
                <When at={entry.created_at} />
              </td>
              <td>
                <Badge>{entry.actor.type.replace('_', ' ')}</Badge> {entry.actor.label}
              </td>
              <td>
                <code>{entry.action}</code>
                {Object.keys(entry.details ?? {}).length > 0 && (
                  <div class="muted small">
                    {Object.entries(entry.details as Record<string, unknown>)
                      .map(
                        ([name, given]) =>
                          `${name}: ${typeof given === 'string' ? given : JSON.stringify(given)}`,
                      )
                      .join(' · ')}
                  </div>
                )}
              </td>
              <td class="small">
                {entry.record.type} <code>{entry.record.id}</code>
              </td>
              <td class="small">{entry.ip ?? '—'}</td>
            </tr>
          ))}
          empty={<Empty title="Nothing recorded yet">Changes show here as they are made.</Empty>}
        />
        <Pager path="/portal/audit" next={props.next} query={{ action: props.action }} />
      </Panel>
    </Layout>
  );
}

/** The team (owners and admins invite, change roles, remove) and the audit log. */
export const teamPages: FastifyPluginAsync = async (app) => {
  const { db } = app.platform;
  const people = accounts(app.platform);

  const showTeam = async (
    request: FastifyRequest,
    reply: FastifyReply,
    form: FormState,
    status = 200,
    invited?: { email: string; url: string },
  ) => {
    const viewer = requireRole(request, MANAGERS);
    const [users, clients] = await Promise.all([
      listUsers(db, viewer.org.id, pageAfter(request.query)),
      listClients(db, viewer.org.id, { limit: 200 }).then((all) => all.filter((client) => !client.is_house)),
    ]);
    const { rows, next } = pageOf(users);
    return sendPage(
      reply,
      <TeamPage
        ctx={request.portal}
        users={rows}
        next={next}
        form={form}
        notice={queryText(request.query, 'notice')}
        invited={invited}
        clients={clients}
      />,
      status,
    );
  };

  app.get('/team', (request, reply) => showTeam(request, reply, emptyForm));
  app.post(
    '/team',
    formHandler({
      show: showTeam,
      // An admin refused what only an owner may do sees why on the team page.
      onForm: [403],
      act: async (request, reply, values) => {
        const viewer = requireRole(request, MANAGERS);
        const role = text(values, 'role') as PublicUser['role'];
        const clientId = text(values, 'client_id');
        const { user, inviteUrl } = await inTransaction(db, (trx) =>
          people.inviteUser(
            trx,
            viewer.org.id,
            {
              email: text(values, 'email'),
              role,
              ...(role === 'client' && clientId ? { client_id: clientId } : {}),
            },
            auditOf(request),
          ),
        );
        return showTeam(request, reply, emptyForm, 201, { email: user.email, url: inviteUrl });
      },
    }),
  );
  app.post(
    '/team/:id/role',
    formHandler({
      show: showTeam,
      // An admin refused what only an owner may do sees why on the team page.
      onForm: [403],
      act: async (request, reply, values) => {
        const viewer = requireRole(request, MANAGERS);
        const role = text(values, 'role') as PublicUser['role'];
        await inTransaction(db, (trx) =>
          changeRole(trx, viewer.org.id, idParam(request), role, auditOf(request)),
        );
        return redirectTo(reply, '/portal/team', 'role_changed');
      },
    }),
  );
  app.post(
    '/team/:id/remove',
    formHandler({
      show: showTeam,
      // An admin refused what only an owner may do sees why on the team page.
      onForm: [403],
      act: async (request, reply) => {
        const viewer = requireRole(request, MANAGERS);
        await inTransaction(db, (trx) => removeUser(trx, viewer.org.id, idParam(request), auditOf(request)));
        return redirectTo(reply, '/portal/team', 'removed');
      },
    }),
  );

  app.get('/audit', async (request, reply) => {
    const viewer = requireRole(request, MANAGERS);
    const action = queryText(request.query, 'action');
    const { rows, next } = pageOf(
      await listAudit(db, viewer.org.id, pageAfter(request.query), action ? { action } : {}),
    );
    return sendPage(reply, <AuditPage ctx={request.portal} entries={rows} next={next} action={action} />);
  });
};
