import type { FastifyRequest } from 'fastify';
import type { ComponentChildren } from 'preact';
import { countRecentCalls } from '../../modules/calls/service.ts';
import { getClient } from '../../modules/clients/service.ts';
import { fuelBalance } from '../../modules/fuel/service.ts';
import { countRecentMessages } from '../../modules/messaging/service.ts';
import { searchWebhooks } from '../../modules/webhooks/service.ts';
import { clientScope, type PortalContext } from '../context.ts';
import { Layout } from '../layout.tsx';
import { Badge, Notice, PageHead, Panel, Stat } from '../ui.tsx';

const RECENT_DAYS = 7;

/** What a client's overview shows: its numbers and the health of its own webhook endpoints. */
export async function clientOverview(request: FastifyRequest, clientId: string) {
  const { db } = request.server.platform;
  const scope = await clientScope(request, clientId);
  const counted = { orgId: scope.orgId, clientId: scope.clientId };
  const [client, balance, messages, calls, webhooks] = await Promise.all([
    getClient(db, scope.orgId, scope.clientId),
    fuelBalance(db, scope.orgId),
    countRecentMessages(db, counted, RECENT_DAYS),
    countRecentCalls(db, counted, RECENT_DAYS),
    searchWebhooks(db, scope, { limit: 200 }),
  ]);
  return {
    client,
    balance,
    messages,
    calls,
    webhooks: webhooks.length,
    unhealthy: webhooks.filter((webhook) => !webhook.active || webhook.consecutive_failures > 0).length,
  };
}

function LinkCard(props: { href: string; title: string; children: ComponentChildren }) {
  return (
    <a class="link-card" href={props.href}>
      <strong>{props.title}</strong>
      <span>{props.children}</span>
    </a>
  );
}

export function ClientOverview(
  props: Awaited<ReturnType<typeof clientOverview>> & {
    ctx: PortalContext;
    notice?: string;
    children?: ComponentChildren;
  },
) {
  const base = `/portal/clients/${props.client.id}`;
  const agencyUser = props.ctx.viewer?.user.role !== 'client';
  return (
    <Layout ctx={props.ctx} title={props.client.name}>
      <PageHead
        title={props.client.name}
        sub="Client overview"
        crumbs={agencyUser && <a href="/portal/clients">Clients</a>}
      />
      {props.notice === 'renamed' && <Notice kind="ok">The client is renamed.</Notice>}
      {props.notice === 'created' && (
        <Notice kind="ok">The client is created. Give it an API key to start.</Notice>
      )}
      <div class="stats">
        <Stat
          label={`SMS, last ${RECENT_DAYS} days`}
          value={props.messages.toLocaleString('en-US')}
          href={`${base}/conversations`}
        />
        <Stat
          label={`Calls, last ${RECENT_DAYS} days`}
          value={props.calls.toLocaleString('en-US')}
          href={`${base}/calls`}
        />
        <Stat label="Webhook endpoints" value={props.webhooks} href={`${base}/webhooks`} />
        <Stat label="Agency FUEL balance" value={props.balance.toLocaleString('en-US')} />
      </div>
      {props.unhealthy > 0 && (
        <Notice kind="bad">
          <Badge kind="bad">{props.unhealthy}</Badge> webhook endpoint
          {props.unhealthy === 1 ? ' is' : 's are'} failing or disabled:{' '}
          <a href={`${base}/webhooks`}>see the delivery log</a>.
        </Notice>
      )}
      <Panel title="In this client">
        <nav class="links" aria-label="Client area">
          <LinkCard href={`${base}/keys`} title="API keys">
            Keys bound to this client (cl_live_)
          </LinkCard>
          <LinkCard href={`${base}/webhooks`} title="Webhooks">
            Endpoints receiving this client's events
          </LinkCard>
          <LinkCard href={`${base}/conversations`} title="SMS conversations">
            Messages sent and received
          </LinkCard>
          <LinkCard href={`${base}/calls`} title="Calls">
            Calls with their transcripts
          </LinkCard>
          <LinkCard href={`${base}/sequences`} title="Sequences">
            Sequences and their enrollments
          </LinkCard>
          <LinkCard href={`${base}/knowledge`} title="Knowledge base">
            Documents and their status
          </LinkCard>
        </nav>
      </Panel>
      {props.children}
    </Layout>
  );
}
