import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { accounts } from '../../modules/users/service.ts';
import { inTransaction } from '../../platform/db/transaction.ts';
import { ApiError } from '../../platform/http/errors.ts';
import { type PortalContext, viewerOf } from '../context.ts';
import { formHandler, text } from '../forms.ts';
import { Bare, Layout } from '../layout.tsx';
import { redirectTo, sendPage } from '../render.tsx';
import { emptyForm, Field, FormError, type FormState, Notice, PageHead, Panel, PostForm } from '../ui.tsx';

const MIN_PASSWORD = 'At least 12 characters.';

/**
 * Where to go after signing in: a portal path of printable ASCII only (a Location header cannot carry
 * anything else), never `//` or `\\` (another host); anything else goes to the overview.
 */
const SAFE_NEXT = /^\/portal(?:\/[\x21-\x7e]*|\?[\x21-\x7e]*)?$/;

function nextPage(values: FormState['values']): string {
  const next = text(values, 'next');
  return SAFE_NEXT.test(next) && !next.includes('//') && !next.includes('\\') ? next : '/portal';
}

function SignInPage(props: { ctx: PortalContext; form: FormState; notice?: string }) {
  return (
    <Bare title="Sign in">
      <h1>Sign in</h1>
      <p class="muted">to your agency's portal.</p>
      {props.notice === 'signed_out' && <Notice kind="info">You are signed out.</Notice>}
      {props.notice === 'password_reset' && (
        <Notice kind="ok">Your password is changed: sign in with it. Every other session was ended.</Notice>
      )}
      <PostForm ctx={props.ctx} action="/portal/sign-in" class="stack" label="Sign in">
        <FormError form={props.form} />
        <input type="hidden" name="next" value={text(props.form.values, 'next')} />
        <Field form={props.form} name="email" label="Email" type="email" autocomplete="username" required />
        <Field
          form={props.form}
          name="password"
          label="Password"
          type="password"
          autocomplete="current-password"
          required
        />
        <button type="submit">Sign in</button>
      </PostForm>
      <p class="auth-foot">
        <a href="/portal/forgot">Forgot your password?</a>
      </p>
    </Bare>
  );
}

function ChoosePasswordPage(props: {
  ctx: PortalContext;
  form: FormState;
  action: string;
  title: string;
  intro: string;
  button: string;
}) {
  return (
    <Bare title={props.title}>
      <h1>{props.title}</h1>
      <p class="muted">{props.intro}</p>
      <PostForm ctx={props.ctx} action={props.action} class="stack" label={props.title}>
        <FormError form={props.form} />
        <Field
          form={props.form}
          name="password"
          label="New password"
          type="password"
          autocomplete="new-password"
          help={MIN_PASSWORD}
          required
        />
        <button type="submit">{props.button}</button>
      </PostForm>
    </Bare>
  );
}

function ForgotPage(props: { ctx: PortalContext; form: FormState; sent?: boolean }) {
  return (
    <Bare title="Reset your password">
      <h1>Reset your password</h1>
      {props.sent ? (
        <Notice kind="ok">
          If an account uses that email, a link to choose a new password is on its way. It works once, for an
          hour.
        </Notice>
      ) : (
        <p class="muted">We email you a link to choose a new password.</p>
      )}
      <PostForm ctx={props.ctx} action="/portal/forgot" class="stack" label="Reset your password">
        <FormError form={props.form} />
        <Field form={props.form} name="email" label="Email" type="email" autocomplete="username" required />
        <button type="submit">Email me a link</button>
      </PostForm>
      <p class="auth-foot">
        <a href="/portal/sign-in">Back to sign in</a>
      </p>
    </Bare>
  );
}

function AccountPage(props: { ctx: PortalContext; form: FormState; notice?: string }) {
  return (
    <Layout ctx={props.ctx} title="Your account">
      <PageHead title="Your account" sub={props.ctx.viewer?.user.email} />
      {props.notice === 'password_changed' && (
        <Notice kind="ok">Your password is changed; every other session of yours was signed out.</Notice>
      )}
      <Panel title="Change password">
        <PostForm ctx={props.ctx} action="/portal/account/password" class="stack" label="Change password">
          <FormError form={props.form} />
          <Field
            form={props.form}
            name="current_password"
            label="Current password"
            type="password"
            autocomplete="current-password"
          />
          <Field
            form={props.form}
            name="new_password"
            label="New password"
            type="password"
            autocomplete="new-password"
            help={MIN_PASSWORD}
          />
          <div>
            <button type="submit">Change password</button>
          </div>
        </PostForm>
      </Panel>
    </Layout>
  );
}

function meta(request: FastifyRequest) {
  return { ip: request.ip, userAgent: request.headers['user-agent'] ?? null };
}

/** The signed-out pages: sign-in, the invitation link, the password reset. */
export const signedOutPages: FastifyPluginAsync = async (app) => {
  const { db } = app.platform;
  const people = accounts(app.platform);
  const sessions = app.portalSessions;

  const showSignIn = (request: FastifyRequest, reply: FastifyReply, form: FormState, status = 200) =>
    sendPage(
      reply,
      <SignInPage ctx={request.portal} form={form} notice={(request.query as { notice?: string }).notice} />,
      status,
    );

  app.get('/sign-in', (request, reply) => {
    if (request.portal.viewer) return reply.redirect('/portal', 303);
    const next = (request.query as { next?: string }).next;
    return showSignIn(request, reply, { values: { next: typeof next === 'string' ? next : '' }, errors: {} });
  });

  app.post(
    '/sign-in',
    formHandler({
      show: showSignIn,
      act: async (request, reply, values) => {
        try {
          const { session } = await people.signIn(
            db,
            {
              email: text(values, 'email'),
              password: typeof values.password === 'string' ? values.password : '',
            },
            meta(request),
          );
          sessions.start(reply, session);
          return reply.redirect(nextPage(values), 303);
        } catch (error) {
          if (!(error instanceof ApiError) || ![401, 429].includes(error.statusCode)) throw error;
          if (error.headers?.['retry-after']) reply.header('retry-after', error.headers['retry-after']);
          return showSignIn(
            request,
            reply,
            { values, errors: {}, formError: error.message },
            error.statusCode,
          );
        }
      },
    }),
  );

  const token = (request: FastifyRequest) => (request.params as { token: string }).token;
  const showInvitation = (request: FastifyRequest, reply: FastifyReply, form: FormState, status = 200) =>
    sendPage(
      reply,
      <ChoosePasswordPage
        ctx={request.portal}
        form={form}
        action={`/portal/invitations/${encodeURIComponent(token(request))}`}
        title="Welcome to the portal"
        intro="Choose a password to accept the invitation; you are signed in right after."
        button="Accept and sign in"
      />,
      status,
    );
  app.get('/invitations/:token', (request, reply) => showInvitation(request, reply, emptyForm));
  app.post(
    '/invitations/:token',
    formHandler({
      show: showInvitation,
      onForm: [404],
      act: async (request, reply, values) => {
        const password = typeof values.password === 'string' ? values.password : '';
        const { session } = await inTransaction(db, (trx) =>
          people.acceptInvitation(trx, token(request), password, meta(request)),
        );
        sessions.start(reply, session);
        return reply.redirect('/portal', 303);
      },
    }),
  );

  const showForgot = (
    request: FastifyRequest,
    reply: FastifyReply,
    form: FormState,
    status = 200,
    sent = false,
  ) => sendPage(reply, <ForgotPage ctx={request.portal} form={form} sent={sent} />, status);
  app.get('/forgot', (request, reply) => showForgot(request, reply, emptyForm));
  app.post(
    '/forgot',
    formHandler({
      show: showForgot,
      act: async (request, reply, values) => {
        await inTransaction(db, (trx) => people.requestPasswordReset(trx, text(values, 'email')));
        return showForgot(request, reply, emptyForm, 200, true);
      },
    }),
  );

  const showReset = (request: FastifyRequest, reply: FastifyReply, form: FormState, status = 200) =>
    sendPage(
      reply,
      <ChoosePasswordPage
        ctx={request.portal}
        form={form}
        action={`/portal/reset/${encodeURIComponent(token(request))}`}
        title="Choose a new password"
        intro="Every session of your account ends when it is set."
        button="Set password"
      />,
      status,
    );
  app.get('/reset/:token', (request, reply) => showReset(request, reply, emptyForm));
  app.post(
    '/reset/:token',
    formHandler({
      show: showReset,
      onForm: [404],
      act: async (request, reply, values) => {
        const password = typeof values.password === 'string' ? values.password : '';
        await inTransaction(db, (trx) => people.resetPassword(trx, token(request), password));
        sessions.end(reply);
        return redirectTo(reply, '/portal/sign-in', 'password_reset');
      },
    }),
  );
};

/** Sign out, and the signed-in user's own account. */
export const accountPages: FastifyPluginAsync = async (app) => {
  const { db } = app.platform;
  const people = accounts(app.platform);
  const sessions = app.portalSessions;

  app.post(
    '/sign-out',
    formHandler({
      show: (_request, reply) => redirectTo(reply, '/portal'),
      act: async (request, reply) => {
        const token = sessions.tokenOf(request);
        if (token) await inTransaction(db, (trx) => people.signOut(trx, token));
        sessions.end(reply);
        return redirectTo(reply, '/portal/sign-in', 'signed_out');
      },
    }),
  );

  const showAccount = (request: FastifyRequest, reply: FastifyReply, form: FormState, status = 200) =>
    sendPage(
      reply,
      <AccountPage ctx={request.portal} form={form} notice={(request.query as { notice?: string }).notice} />,
      status,
    );
  app.get('/account', (request, reply) => showAccount(request, reply, emptyForm));
  app.post(
    '/account/password',
    formHandler({
      show: showAccount,
      act: async (request, reply, values) => {
        const viewer = viewerOf(request);
        const given = (name: string) => (typeof values[name] === 'string' ? (values[name] as string) : '');
        await inTransaction(db, (trx) =>
          people.changePassword(
            trx,
            { org_id: viewer.org.id, id: viewer.user.id },
            given('current_password'),
            given('new_password'),
            viewer.sessionId,
            meta(request),
          ),
        );
        return redirectTo(reply, '/portal/account', 'password_changed');
      },
    }),
  );
};
