import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * What must never reach the service log (issue 17): an API key (its prefix and 43 characters), a
 * webhook signing secret, the test ADMIN_TOKEN. `npm test` scans the log of the whole suite with it.
 */
const PATTERNS: Array<[string, RegExp]> = [
  ['API key', /(?:gc_live_|cl_live_|sms_live_)[A-Za-z0-9_-]{43}/g],
  ['webhook secret', /whsec_[A-Za-z0-9_-]{16,}/g],
  ['admin token', /test-admin-token/g],
];

/** The findings in the `.log` files of `dir`, each with its file and the kind, the secret masked. */
export async function scanServiceLog(dir: string): Promise<{ lines: number; findings: string[] }> {
  const findings: string[] = [];
  let lines = 0;
  const files = await fs.readdir(dir).catch(() => [] as string[]);
  for (const file of files.filter((name) => name.endsWith('.log'))) {
    const text = await fs.readFile(path.join(dir, file), 'utf8');
    for (const line of text.split('\n')) {
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
