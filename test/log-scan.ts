import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * What must never reach the service log (issue 17): an API key (its prefix and 43 characters), a
 * webhook signing secret, the test ADMIN_TOKEN, the token of a portal invitation or reset link. `npm test` scans the log of the whole suite with it:
 * every line an app under test logged, and the JSON (pino) lines of every service process started.
 */
const PATTERNS: Array<[string, RegExp]> = [
  ['API key', /(?:gc_live_|cl_live_|sms_live_)[A-Za-z0-9_-]{43}/g],
  ['webhook secret', /whsec_[A-Za-z0-9_-]{16,}/g],
  ['admin token', /test-admin-token/g],
  ['portal link token', /\/portal\/(?:invitations|reset)\/[A-Za-z0-9_-]{43}/g],
];

/** The findings in the `.log` files of `dir`, each with its file and the kind, the secret masked. */
export async function scanServiceLog(dir: string): Promise<{ lines: number; findings: string[] }> {
  const findings: string[] = [];
  let lines = 0;
  const files = await fs.readdir(dir).catch(() => [] as string[]);
  for (const file of files.filter((name) => name.endsWith('.log'))) {
    const text = await fs.readFile(path.join(dir, file), 'utf8');
    for (const line of text.split('\n')) {
      // A service process's output holds its log (JSON lines) and what it prints on purpose, such as
      // the demo keys of a first start (documented, shown once); the scan is of the log.
      if (file.startsWith('child-') && !line.startsWith('{')) continue;
      lines += 1;
      for (const [kind, pattern] of PATTERNS) {
        for (const match of line.matchAll(pattern)) {
          const at = line.indexOf(match[0]);
          const context = `${line.slice(Math.max(0, at - 120), at)}<${kind}: ${match[0].slice(0, 9)}…>`;
          findings.push(`${file}: ${context}`);
        }
      }
    }
  }
  return { lines, findings };
}
