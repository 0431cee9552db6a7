// `npm install` builds the SDK workspace (sdk/dist) when TypeScript is installed; an install without
// dev dependencies (`--omit=dev`, a production deploy) has neither the compiler nor a use for the SDK.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';

try {
  createRequire(import.meta.url).resolve('typescript');
} catch {
  process.exit(0);
}
execFileSync('npm', ['run', 'build', '--workspace', 'sdk'], { stdio: 'inherit' });
