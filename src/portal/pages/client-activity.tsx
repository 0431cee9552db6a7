import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ComponentChildren } from 'preact';
import { callKeyset, getCall, searchCalls } from '../../modules/calls/service.ts';
import { getKnowledgeBase, listDocuments, listKnowledgeBases } from '../../modules/knowledge/service.ts';
import {
  conversationKeyset,
  conversationMessages,
  getConversation,
  searchConversations,
} from '../../modules/messaging/service.ts';
import { enrollmentCounts, searchSequences } from '../../modules/sequences/service.ts';
import { clientArea, idParam, type PortalContext } from '../context.ts';
import { Layout } from '../layout.tsx';
import { pageAfter, pageOf } from '../paging.ts';
import { sendPage } from '../render.tsx';
import { Badge, Empty, PageHead, Pager, Panel, Table, When } from '../ui.tsx';

/** The read-only pages of a client's area, linked from its overview: what the client's API did. */

function clientOf(request: FastifyRequest) {
  return clientArea(request, (request.params as { clientId: string }).clientId);
}

function ClientPage(props: {
  ctx: PortalContext;
  client: { name: string; base: string };
  title: string;
  sub?: string;
  up?: { href: string; label: string };
  children: ComponentChildren;
}) {
  const { client } = props;
  return (
    <Layout ctx={props.ctx} title={`${props.title} · ${client.name}`}>
      <PageHead
        title={props.title}
        sub={props.sub}
        crumbs={
          <>
            <a href={client.base}>{client.name}</a>
            {props.up && (
              <>
                {' / '}
                <a href={props.up.href}>{props.up.label}</a>
              </>
            )}
          </>
        }
      />
      {props.children}
    </Layout>
  );
}

const STATUS_KIND: Record<string, 'ok' | 'warn' | 'bad' | undefined> = {
  delivered: 'ok',
  received: 'ok',
  sent: 'ok',
  completed: 'ok',
  ready: 'ok',
  active: 'ok',
  queued: 'warn',
  sending: 'warn',
  pending: 'warn',
  processing: 'warn',
  paused: 'warn',
  draft: 'warn',
  failed: 'bad',
  undelivered: 'bad',
  'no-answer': 'bad',
  busy: 'bad',
  archived: undefined,
};

function Status(props: { status: string }) {
  return <Badge kind={STATUS_KIND[props.status]}>{props.status.replace(/[_-]/g, ' ')}</Badge>;
}

export const clientActivityPages: FastifyPluginAsync = async (app) => {
  const { db } = app.platform;

  app.get('/clients/:clientId/conversations', async (request, reply) => {
    const client = await clientOf(request);
    const { rows, next } = pageOf(
      await searchConversations(db, client.scope, {}, pageAfter(request.query, conversationKeyset)),
      conversationKeyset,
    );
    return sendPage(
      reply,
      <ClientPage ctx={request.portal} client={client} title="SMS conversations">
        <Panel>
          <Table
            label="SMS conversations"
            head={[
              'With',
              'Our number',
              { label: 'Messages', num: true },
              { label: 'Unread', num: true },
              'Status',
              'Last message',
            ]}
            rows={rows.map((conversation) => (
              <tr>
                <td>
                  <a href={`${client.base}/conversations/${conversation.id}`}>{conversation.phone_number}</a>
                </td>
                <td>{conversation.our_number}</td>
                <td class="num">{conversation.total_messages}</td>
                <td class="num">{conversation.unread_count}</td>
                <td>
                  <Status status={conversation.status} />
                </td>
                <td>
                  <When at={conversation.last_message_at} />
                </td>
              </tr>
            ))}
            empty={
              <Empty title="No conversations yet">Messages sent or received through the API show here.</Empty>
            }
          />
          <Pager path={`${client.base}/conversations`} next={next} />
        </Panel>
      </ClientPage>,
    );
  });

  app.get('/clients/:clientId/conversations/:id', async (request, reply) => {
    const client = await clientOf(request);
    const id = idParam(request);
    const conversation = await getConversation(db, client.scope, id);
    const { rows, next } = pageOf(await conversationMessages(db, client.scope, id, pageAfter(request.query)));
    return sendPage(
      reply,
      <ClientPage
        ctx={request.portal}
        client={client}
        title={`Conversation with ${conversation.phone_number}`}
        sub={`From ${conversation.our_number}, newest first`}
        up={{ href: `${client.base}/conversations`, label: 'SMS conversations' }}
      >
        <Panel>
          <Table
            label="Messages"
            head={['Time', 'Direction', 'Message', 'Status', { label: 'FUEL', num: true }]}
            rows={rows.map((message) => (
              <tr>
                <td>
                  <When at={message.created_at} />
                </td>
                <td>{message.direction === 'inbound' ? 'Received' : 'Sent'}</td>
                <td>{message.body}</td>
                <td>
                  <Status status={message.status} />
                </td>
                <td class="num">{message.fuel_cost}</td>
              </tr>
            ))}
            empty={<Empty title="No messages" />}
          />
          <Pager path={`${client.base}/conversations/${id}`} next={next} />
        </Panel>
      </ClientPage>,
    );
  });

  app.get('/clients/:clientId/calls', async (request, reply) => {
    const client = await clientOf(request);
    const { rows, next } = pageOf(
      await searchCalls(db, client.scope, {}, pageAfter(request.query, callKeyset)),
      callKeyset,
    );
    return sendPage(
      reply,
      <ClientPage ctx={request.portal} client={client} title="Calls">
        <Panel>
          <Table
            label="Calls"
            head={['Time', 'Direction', 'From', 'To', 'Status', { label: 'Duration', num: true }, 'Summary']}
            rows={rows.map((call) => (
              <tr>
                <td>
                  <a href={`${client.base}/calls/${call.id}`}>
                    <When at={call.created_at} />
                  </a>
                </td>
                <td>{call.direction}</td>
                <td>{call.from}</td>
                <td>{call.to}</td>
                <td>
                  <Status status={call.status} />
                </td>
                <td class="num">{call.duration_seconds === null ? '—' : `${call.duration_seconds} s`}</td>
                <td class="small">{call.summary ?? '—'}</td>
              </tr>
            ))}
            empty={<Empty title="No calls yet">Inbound calls and SDR campaign calls show here.</Empty>}
          />
          <Pager path={`${client.base}/calls`} next={next} />
        </Panel>
      </ClientPage>,
    );
  });

  app.get('/clients/:clientId/calls/:id', async (request, reply) => {
    const client = await clientOf(request);
    const call = await getCall(db, client.scope, idParam(request));
    return sendPage(
      reply,
      <ClientPage
        ctx={request.portal}
        client={client}
        title={`Call ${call.direction === 'inbound' ? 'from' : 'to'} ${call.direction === 'inbound' ? call.from : call.to}`}
        up={{ href: `${client.base}/calls`, label: 'Calls' }}
      >
        <div class="grid-2">
          <Panel title="Call">
            <dl class="facts">
              <dt>Status</dt>
              <dd>
                <Status status={call.status} />
              </dd>
              <dt>From</dt>
              <dd>{call.from}</dd>
              <dt>To</dt>
              <dd>{call.to}</dd>
              <dt>Started</dt>
              <dd>
                <When at={call.started_at ?? call.created_at} />
              </dd>
              <dt>Duration</dt>
              <dd>{call.duration_seconds === null ? '—' : `${call.duration_seconds} s`}</dd>
              <dt>Outcome</dt>
              <dd>{call.outcome ?? call.disposition ?? '—'}</dd>
            </dl>
          </Panel>
          <Panel title="Summary">
            <p>{call.summary ?? 'No summary.'}</p>
          </Panel>
        </div>
        <Panel title="Transcript">
          {call.transcript.length === 0 ? (
            <Empty title="No transcript" />
          ) : (
            <Table
              label="Transcript"
              head={[{ label: 'At', num: true }, 'Speaker', 'Said']}
              rows={call.transcript.map((turn) => (
                <tr>
                  <td class="num">{`${turn.start_time_seconds} s`}</td>
                  <td>{turn.speaker}</td>
                  <td>{turn.content}</td>
                </tr>
              ))}
              empty={null}
            />
          )}
        </Panel>
      </ClientPage>,
    );
  });

  app.get('/clients/:clientId/sequences', async (request, reply) => {
    const client = await clientOf(request);
    const { rows, next } = pageOf(await searchSequences(db, client.scope, {}, pageAfter(request.query)));
    const counts = await enrollmentCounts(
      db,
      client.scope,
      rows.map((sequence) => sequence.id),
    );
    return sendPage(
      reply,
      <ClientPage ctx={request.portal} client={client} title="Sequences">
        <Panel>
          <Table
            label="Sequences"
            head={[
              'Name',
              'Status',
              { label: 'Steps', num: true },
              { label: 'Active', num: true },
              { label: 'Paused', num: true },
              { label: 'Completed', num: true },
              { label: 'Cancelled', num: true },
              'Created',
            ]}
            rows={rows.map((sequence) => {
              const count = counts.get(sequence.id);
              return (
                <tr>
                  <td>
                    {sequence.name}
                    {sequence.description && <div class="muted small">{sequence.description}</div>}
                  </td>
                  <td>
                    <Status status={sequence.status} />
                  </td>
                  <td class="num">{(sequence.steps as unknown[]).length}</td>
                  <td class="num">{count?.active ?? 0}</td>
                  <td class="num">{count?.paused ?? 0}</td>
                  <td class="num">{count?.completed ?? 0}</td>
                  <td class="num">{count?.cancelled ?? 0}</td>
                  <td>
                    <When at={sequence.created_at} />
                  </td>
                </tr>
              );
            })}
            empty={<Empty title="No sequences yet">Sequences created through the API show here.</Empty>}
          />
          <Pager path={`${client.base}/sequences`} next={next} />
        </Panel>
      </ClientPage>,
    );
  });

  app.get('/clients/:clientId/knowledge', async (request, reply) => {
    const client = await clientOf(request);
    const { rows, next } = pageOf(await listKnowledgeBases(db, client.scope, pageAfter(request.query)));
    return sendPage(
      reply,
      <ClientPage ctx={request.portal} client={client} title="Knowledge bases">
        <Panel>
          <Table
            label="Knowledge bases"
            head={['Name', { label: 'Documents', num: true }, 'Updated']}
            rows={rows.map((kb) => (
              <tr>
                <td>
                  <a href={`${client.base}/knowledge/${kb.id}`}>{kb.name}</a>
                  {kb.description && <div class="muted small">{kb.description}</div>}
                </td>
                <td class="num">{kb.document_count}</td>
                <td>
                  <When at={kb.updated_at} />
                </td>
              </tr>
            ))}
            empty={
              <Empty title="No knowledge bases yet">Knowledge bases created through the API show here.</Empty>
            }
          />
          <Pager path={`${client.base}/knowledge`} next={next} />
        </Panel>
      </ClientPage>,
    );
  });

  app.get('/clients/:clientId/knowledge/:id', async (request, reply) => {
    const client = await clientOf(request);
    const id = idParam(request);
    const kb = await getKnowledgeBase(db, client.scope, id);
    const { rows, next } = pageOf(await listDocuments(db, client.scope, id, {}, pageAfter(request.query)));
    return sendPage(
      reply,
      <ClientPage
        ctx={request.portal}
        client={client}
        title={kb.name}
        sub={kb.description ?? undefined}
        up={{ href: `${client.base}/knowledge`, label: 'Knowledge bases' }}
      >
        <Panel title="Documents">
          <Table
            label="Documents"
            head={['Title', 'Source', 'Status', { label: 'Chunks', num: true }, 'Added']}
            rows={rows.map((document) => (
              <tr>
                <td>
                  {document.title}
                  {document.error && <div class="muted small">{document.error}</div>}
                </td>
                <td class="small">{document.source_url ?? document.source_type}</td>
                <td>
                  <Status status={document.status} />
                </td>
                <td class="num">{document.chunk_count ?? '—'}</td>
                <td>
                  <When at={document.created_at} />
                </td>
              </tr>
            ))}
            empty={<Empty title="No documents yet" />}
          />
          <Pager path={`${client.base}/knowledge/${id}`} next={next} />
        </Panel>
      </ClientPage>,
    );
  });
};
