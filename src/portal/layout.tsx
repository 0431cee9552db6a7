import type { ComponentChildren } from 'preact';
import { isManager, type PortalContext, type Viewer } from './context.ts';
import { PostForm } from './ui.tsx';

const ASSETS = '/portal/assets';

function Document(props: { title: string; children: ComponentChildren }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="same-origin" />
        <title>{`${props.title} · Agency Platform`}</title>
        <link rel="stylesheet" href={`${ASSETS}/portal.css`} />
        <link rel="icon" href={`${ASSETS}/favicon.svg`} type="image/svg+xml" />
        <script src={`${ASSETS}/portal.js`} defer />
      </head>
      <body>{props.children}</body>
    </html>
  );
}

interface NavLink {
  href: string;
  label: string;
}

/** What the viewer's role may open: managers run the agency, members work in clients, client users in theirs. */
function navigation(viewer: Viewer): { heading: string; links: NavLink[] }[] {
  const { role, client_id } = viewer.user;
  if (role === 'client' && client_id) {
    const base = `/portal/clients/${client_id}`;
    return [
      {
        heading: 'Your account',
        links: [
          { href: '/portal', label: 'Overview' },
          { href: `${base}/keys`, label: 'API keys' },
          { href: `${base}/webhooks`, label: 'Webhooks' },
        ],
      },
      {
        heading: 'Activity',
        links: [
          { href: `${base}/conversations`, label: 'SMS conversations' },
          { href: `${base}/calls`, label: 'Calls' },
          { href: `${base}/sequences`, label: 'Sequences' },
          { href: `${base}/knowledge`, label: 'Knowledge base' },
        ],
      },
    ];
  }
  const work = {
    heading: 'Agency',
    links: [
      { href: '/portal', label: 'Overview' },
      { href: '/portal/clients', label: 'Clients' },
    ],
  };
  if (!isManager(viewer)) return [work];
  return [
    work,
    {
      heading: 'Developers',
      links: [
        { href: '/portal/keys', label: 'API keys' },
        { href: '/portal/webhooks', label: 'Webhooks' },
      ],
    },
    {
      heading: 'Settings',
      links: [
        { href: '/portal/fuel', label: 'FUEL' },
        { href: '/portal/team', label: 'Team' },
        { href: '/portal/audit', label: 'Audit log' },
      ],
    },
  ];
}

/** The current page's link: the longest link the path starts with. */
function currentHref(links: NavLink[], path: string): string | undefined {
  return links
    .filter((link) => path === link.href || (link.href !== '/portal' && path.startsWith(`${link.href}/`)))
    .sort((a, b) => b.href.length - a.href.length)[0]?.href;
}

/** A signed-in page: the sidebar of navigation by role, the page in `main`. */
export function Layout(props: { ctx: PortalContext; title: string; children: ComponentChildren }) {
  const { viewer } = props.ctx;
  if (!viewer) return <Bare title={props.title}>{props.children}</Bare>;
  const sections = navigation(viewer);
  const current = currentHref(
    sections.flatMap((section) => section.links),
    props.ctx.path,
  );
  return (
    <Document title={props.title}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <div class="shell">
        <header class="sidebar">
          <a class="brand" href="/portal">
            <span class="brand-mark" aria-hidden="true" />
            Agency Platform
          </a>
          <div class="org-name">{viewer.org.name}</div>
          <nav class="nav" aria-label="Portal">
            {sections.map((section) => (
              <>
                <div class="nav-heading">{section.heading}</div>
                {section.links.map((link) => (
                  <a href={link.href} aria-current={link.href === current ? 'page' : undefined}>
                    {link.label}
                  </a>
                ))}
              </>
            ))}
          </nav>
          <div class="sidebar-foot">
            <div class="who">{viewer.user.email}</div>
            <div class="role">
              {viewer.user.role} · <a href="/portal/account">Your account</a>
            </div>
            <PostForm ctx={props.ctx} action="/portal/sign-out">
              <button type="submit" class="small">
                Sign out
              </button>
            </PostForm>
          </div>
        </header>
        <main id="main">{props.children}</main>
      </div>
    </Document>
  );
}

/** A signed-out page: one card in the middle. */
export function Bare(props: { title: string; children: ComponentChildren }) {
  return (
    <Document title={props.title}>
      <main class="auth" id="main">
        <div class="auth-card">
          <div class="brand">
            <span class="brand-mark" aria-hidden="true" />
            Agency Platform
          </div>
          {props.children}
        </div>
      </main>
    </Document>
  );
}
