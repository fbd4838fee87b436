import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../..', import.meta.url));

export interface Snippet {
  readonly file: string;
  readonly line: number;
  /** From a `<!-- snippet: NAME -->` line just above the block. */
  readonly name?: string;
  readonly code: string;
}

/**
 * The ```ts blocks of a markdown file that stand alone: those that start with an import, unless a
 * `<!-- not compiled: why -->` line sits just above them.
 */
export async function snippetsOf(file: string): Promise<Snippet[]> {
  const lines = (await readFile(join(REPO, file), 'utf8')).split('\n');
  const found: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```ts') continue;
    const end = lines.indexOf('```', i + 1);
    const code = lines.slice(i + 1, end).join('\n');
    const above = lines[i - 1] ?? '';
    i = end;
    if (!code.startsWith('import ') || above.startsWith('<!-- not compiled')) continue;
    const name = /^<!-- snippet: ([\w-]+) -->$/.exec(above)?.[1];
    found.push({ file, line: i + 1, code, ...(name === undefined ? {} : { name }) });
  }
  return found;
}

/** Writes the snippets into a new directory inside the repository (so packages resolve), one module each. */
export async function writeSnippets(snippets: readonly Snippet[]): Promise<{ dir: string; paths: Map<Snippet, string> }> {
  const dir = await mkdtemp(join(REPO, '.docs-snippets-'));
  const paths = new Map<Snippet, string>();
  for (const [n, s] of snippets.entries()) {
    const path = join(dir, `${s.name ?? `block-${n}`}.ts`);
    await writeFile(path, `${s.code}\nexport {};\n`);
    paths.set(s, path);
  }
  const tsconfig = { extends: '../tsconfig.json', compilerOptions: { rootDir: '..', noEmit: true }, include: ['*.ts', '../test/types/sdk-fit.ts'] };
  await writeFile(join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
  return { dir, paths };
}

/** `tsc --noEmit -p dir` under the repository's strict settings: its output, empty when clean. */
export function typecheck(dir: string): Promise<{ code: number; output: string }> {
  const tsc = join(REPO, 'node_modules/typescript/bin/tsc');
  return new Promise((resolve) => {
    execFile(process.execPath, [tsc, '--noEmit', '-p', dir], { cwd: REPO, maxBuffer: 1 << 24 }, (err, stdout, stderr) =>
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, output: `${stdout}${stderr}` }),
    );
  });
}
