import { readFileSync } from 'node:fs';

export function packageVersion(): string {
  // src/cli and dist/cli both sit two levels below package.json.
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
}
