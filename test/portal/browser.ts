import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { adminCall, buildTestApp, type TestApp } from '../helpers.ts';

/**
 * The portal's browser tests: Debian's Chromium, headless, driven by playwright-core (no browser
 * download), against a service listening on 127.0.0.1. One browser per test file; each test opens
 * contexts (a person each) of its own.
 */

export const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
export const SCREENSHOTS = path.resolve(import.meta.dirname, '../../.test-data/portal-screenshots');
const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

export interface PortalHarness {
  t: TestApp;
  /** The service's base URL, `http://127.0.0.1:<port>`. */
  base: string;
  browser: Browser;
  /** A fresh browser profile: a person with cookies of their own. */
  person(): Promise<Page>;
  close(): Promise<void>;
}

/** A started service (API and portal on one port, plus a job worker) and a headless Chromium. */
export async function startPortal(overrides: Record<string, string> = {}): Promise<PortalHarness> {
  // The public base URL must be known before the app is built (links in emails), so the port is chosen first.
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const t = await buildTestApp({ PUBLIC_BASE_URL: base, ...overrides });
  await t.app.listen({ port, host: '127.0.0.1' });
  await t.startWorker();
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
  await fs.mkdir(SCREENSHOTS, { recursive: true });
  const contexts: BrowserContext[] = [];
  return {
    t,
    base,
    browser,
    person: async () => {
      // bypassCSP lets the axe-core check inject its script; the pages' own headers are asserted apart.
      const context = await browser.newContext({
        baseURL: base,
        bypassCSP: true,
        viewport: { width: 1280, height: 860 },
      });
      contexts.push(context);
      return context.newPage();
    },
    close: async () => {
      for (const context of contexts) await context.close().catch(() => {});
      await browser.close();
      await t.close();
    },
  };
}

async function freePort(): Promise<number> {
  const net = await import('node:net');
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Checks the page as it stands: a screenshot saved under `.test-data/portal-screenshots/<name>.png`,
 * no serious or critical axe-core violation, no stack trace, and the portal's security headers.
 */
export async function checkPage(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
  const text = await page.locator('body').innerText();
  assert.doesNotMatch(text, /\n\s+at .+\(.+:\d+:\d+\)|Error: .+\n\s+at /, `${name}: a stack trace shows`);
  await page.addScriptTag({ path: AXE });
  const violations = await page.evaluate(async () => {
    const result = await (window as any).axe.run(document, { resultTypes: ['violations'] });
    return result.violations
      .filter((violation: any) => violation.impact === 'serious' || violation.impact === 'critical')
      .map((violation: any) => ({
        id: violation.id,
        impact: violation.impact,
        help: violation.help,
        nodes: violation.nodes.slice(0, 3).map((node: any) => node.html),
      }));
  });
  assert.deepEqual(
    violations,
    [],
    `${name}: accessibility violations ${JSON.stringify(violations, null, 1)}`,
  );
}

/** Opens a portal path and checks it (see `checkPage`); returns the response's status. */
export async function visit(page: Page, pathname: string, name: string): Promise<number> {
  const response = await page.goto(pathname);
  assert.ok(response, `no response for ${pathname}`);
  await checkPage(page, name);
  return response.status();
}

export const PASSWORD = 'correct horse battery staple';

/** Invites a person through the admin API, and accepts in the browser: they are signed in after. */
export async function invitedAndSignedIn(
  h: PortalHarness,
  orgId: string,
  person: { email: string; role: 'owner' | 'admin' | 'member' | 'client'; client_id?: string },
): Promise<Page> {
  const { invite_url } = await adminCall(h.t.app, 'POST', `/orgs/${orgId}/users`, person);
  const page = await h.person();
  // Confirmation dialogs (revoke, remove, disable) are answered yes.
  page.on('dialog', (dialog) => dialog.accept());
  await page.goto(invite_url);
  await page.getByLabel('New password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Accept and sign in' }).click();
  await page.waitForURL(`${h.base}/portal`);
  return page;
}

/** A request to the API with a key, from outside the browser. */
export async function api(h: PortalHarness, key: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${h.base}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: response.status, body: (await response.json().catch(() => null)) as any };
}
