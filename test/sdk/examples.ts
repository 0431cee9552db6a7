import fs from 'node:fs/promises';
import path from 'node:path';

const page = path.resolve(import.meta.dirname, '../../docs/pages/platform/sdk.md');

/** The SDK page's examples by file name: its ```ts blocks whose info string names a file. */
export async function docExamples(file = page): Promise<Map<string, string>> {
  const markdown = await fs.readFile(file, 'utf8');
  return new Map(
    [...markdown.matchAll(/```ts ([\w./-]+)\n([\s\S]*?)```/g)].map((m) => [m[1] ?? '', m[2] ?? '']),
  );
}
