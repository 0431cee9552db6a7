import type { FastifyPluginAsync } from 'fastify';
import { countRecentCalls } from '../../modules/calls/service.ts';
import { listClients } from '../../modules/clients/service.ts';
import { fuelBalance } from '../../modules/fuel/service.ts';
import { countRecentMessages } from '../../modules/messaging/service.ts';
import { searchWebhooks, type toWebhook } from '../../modules/webhooks/service.ts';
import { type PortalContext, viewerOf } from '../context.ts';
import { Layout } from '../layout.tsx';
import { sendPage } from '../render.tsx';
import { Badge, Empty, PageHead, Panel, Stat, Table, When } from '../ui.tsx';
import { ClientOverview, clientOverview } from './client-overview.tsx';

export const RECENT_DAYS = 7;
/** Subscriptions the overview looks through for failing or disabled ones. */
const HEALTH_SCAN = 200;

type Webhook = ReturnType<typeof toWebhook>;

function AgencyOverview(props: {
  ctx: PortalContext;
  balance: number;
  clients: { id: string; name: string }[];
  moreClients: boolean;
  unhealthy: Webhook[];
  webhookCount: number;
  messages: number;
  calls: number;
  manager: boolean;
}) {
  const { ctx } = props;
  return (
    <Layout ctx={ctx} title="Overview">
      <PageHead title={ctx.viewer!.org.name} sub="Your agency at a glance." />
      <div class="stats">
        <Stat
          label="FUEL balance"
          value={props.balance.toLocaleString('en-US')}
          href={props.manager ? '/portal/fuel' : undefined}
        />
        <Stat
          label="Clients"
          value={props.moreClients ? `${props.clients.length}+` : props.clients.length}
          href="/portal/clients"
        />
        <Stat
          label={`SMS, last ${RECENT_DAYS} days`}
          value={props.messages.toLocaleString('en-US')}
          hint="Sent and received, every client"
        />
        <Stat
          label={`Calls, last ${RECENT_DAYS} days`}
          value={props.calls.toLocaleString('en-US')}
          hint="Every client"
        />
      </div>
      <div class="grid-2">
        <Panel title="Webhook health" actions={props.manager && <a href="/portal/webhooks">All endpoints</a>}>
          {props.unhealthy.length === 0 ? (
            <Empty title={props.webhookCount === 0 ? 'No endpoints yet' : 'All endpoints are healthy'}>
              {props.webhookCount === 0
                ? 'Add one under Webhooks to receive events.'
                : 'No endpoint is failing or disabled.'}
            </Empty>
          ) : (
            <Table
              label="Failing or disabled endpoints"
              head={['Endpoint', 'Status']}
              rows={props.unhealthy.map((webhook) => (
                <tr>
                  <td>
                    {webhook.client_id || props.manager ? (
                      <a
                        href={
                          webhook.client_id
                            ? `/portal/clients/${webhook.client_id}/webhooks/${webhook.id}`
                            : `/portal/webhooks/${webhook.id}`
                        }
                      >
                        {webhook.url}
                      </a>
                    ) : (
                      // An agency-wide endpoint's page is for owners and admins.
                      webhook.url
                    )}
                  </td>
                  <td>
                    {webhook.active ? (
                      <Badge kind="warn">{`Failing (${webhook.consecutive_failures})`}</Badge>
                    ) : (
                      <Badge kind="bad">
                        Disabled <When at={webhook.disabled_at} />
                      </Badge>
                    )}
                  </td>
                </tr>
              ))}
              empty={null}
            />
          )}
        </Panel>
        <Panel title="Clients" actions={<a href="/portal/clients">All clients</a>}>
          <Table
            label="Clients"
            head={['Name']}
            rows={props.clients.slice(0, 8).map((client) => (
              <tr>
                <td>
                  <a href={`/portal/clients/${client.id}`}>{client.name}</a>
                </td>
              </tr>
            ))}
            empty={
              <Empty title="No clients yet">
                <a href="/portal/clients">Create your first client</a>
              </Empty>
            }
          />
        </Panel>
      </div>
    </Layout>
  );
}

export const overviewPages: FastifyPluginAsync = async (app) => {
  const { db } = app.platform;

  app.get('/', async (request, reply) => {
    const viewer = viewerOf(request);
    if (viewer.user.role === 'client' && viewer.user.client_id) {
      const data = await clientOverview(request, viewer.user.client_id);
      return sendPage(reply, <ClientOverview ctx={request.portal} {...data} />);
    }
    const org = { orgId: viewer.org.id, clientId: null };
    const agency = { orgId: viewer.org.id, clientId: viewer.org.house_client_id, isClientScoped: false };
    const [balance, clients, webhooks, messages, calls] = await Promise.all([
      fuelBalance(db, viewer.org.id),
      listClients(db, viewer.org.id, { limit: 51 }),
      searchWebhooks(db, agency, { limit: HEALTH_SCAN }),
      countRecentMessages(db, org, RECENT_DAYS),
      countRecentCalls(db, org, RECENT_DAYS),
    ]);
    return sendPage(
      reply,
      <AgencyOverview
        ctx={request.portal}
        balance={balance}
        clients={clients.slice(0, 50)}
        moreClients={clients.length > 50}
        unhealthy={webhooks.filter((webhook) => !webhook.active || webhook.consecutive_failures > 0)}
        webhookCount={webhooks.length}
        messages={messages}
        calls={calls}
        manager={viewer.user.role === 'owner' || viewer.user.role === 'admin'}
      />,
    );
  });
};
