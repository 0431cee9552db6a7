import type { FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { render } from 'preact-render-to-string';
import { Layout } from './layout.tsx';
import { PageHead, Panel } from './ui.tsx';

/** Sends a rendered page. Preact escapes every text and attribute value it renders. */
export function sendPage(reply: FastifyReply, page: VNode, status = 200): FastifyReply {
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .send(`<!doctype html>${render(page)}`);
}

/** After a change, back to a page (POST, redirect, GET), with a notice naming what was done. */
export function redirectTo(reply: FastifyReply, path: string, notice?: string): FastifyReply {
  return reply.redirect(notice ? `${path}?notice=${encodeURIComponent(notice)}` : path, 303);
}

const TITLES: Record<number, { title: string; text: string }> = {
  403: {
    title: 'Not allowed',
    text: 'Your role does not give access to this page. An owner or admin of your agency can change your role.',
  },
  404: {
    title: 'Page not found',
    text: 'There is nothing here, or it belongs to an account you cannot see.',
  },
  429: { title: 'Too many attempts', text: 'Wait a minute, then try again.' },
  500: { title: 'Something went wrong', text: 'The error has been logged. Try again in a moment.' },
};

/** An error as a page of the portal: never a stack trace, never the API's JSON. */
export function sendErrorPage(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  message?: string,
): FastifyReply {
  const known = TITLES[status] ?? TITLES[status >= 500 ? 500 : 404];
  const ctx = request.portal ?? { viewer: null, csrf: '', path: '', csrfValid: false };
  return sendPage(
    reply,
    <Layout ctx={ctx} title={known.title}>
      <PageHead title={known.title} sub={`Error ${status}`} />
      <Panel>
        <p>{message ?? known.text}</p>
        <p>
          <a href="/portal">Back to the overview</a>
        </p>
      </Panel>
    </Layout>,
    status,
  );
}
