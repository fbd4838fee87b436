import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const read = (path: string) => readFileSync(join(REPO, path), 'utf8');
const pkg = JSON.parse(read('package.json')) as {
  scripts: Record<string, string>;
  files: string[];
  repository?: { type: string; url: string };
  license: string;
  bin: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
  exports: Record<string, unknown>;
};

describe('package.json and the files it ships', () => {
  it('has no install-time scripts; it builds in prepack, and demo builds first', () => {
    for (const s of ['preinstall', 'install', 'postinstall', 'prepare']) expect(pkg.scripts, s).not.toHaveProperty(s);
    expect(pkg.scripts.prepack).toBe('npm run build');
    expect(pkg.scripts.demo).toMatch(/^npm run build && /);
  });

  it('the README quick start builds before anything needs dist/', () => {
    const quick = /## Quick start[^]*?```sh\n([^]*?)```/.exec(read('README.md'))![1]!;
    const commands = quick.split('\n').map((l) => l.replace(/#.*$/, '').trim()).filter(Boolean);
    expect(commands).toEqual(['npm install && npm run build', 'npm run demo', 'npm test']);
  });

  it('has an MIT LICENSE held by the dsh-fs contributors, and a repository', () => {
    expect(pkg.license).toBe('MIT');
    expect(read('LICENSE')).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} dsh-fs contributors\n/);
    expect(pkg.repository).toMatchObject({ type: 'git', url: expect.stringMatching(/^git\+https:\/\/.+\.git$/) });
    expect(pkg.files).toEqual(expect.arrayContaining(['dist', 'docs', 'README.md', 'LICENSE']));
  });

  it('ships every file the README and docs link to', () => {
    const shipped = (path: string) => pkg.files.some((f) => path === f || path.startsWith(`${f}/`));
    const pages = ['README.md', ...readdirSync(join(REPO, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
    for (const page of pages) {
      for (const [, link] of read(page).matchAll(/\]\(((?!https?:|#)[^)#]+)/g)) {
        const target = join(dirname(page), link!).replace(/\\/g, '/');
        expect(existsSync(join(REPO, target)), `${page} → ${link}`).toBe(true);
        expect(shipped(target), `${page} → ${link}`).toBe(true);
      }
    }
  });

  it('keeps ai an optional peer, pinned exactly for development, and every other version exact', () => {
    expect(pkg.peerDependenciesMeta.ai?.optional).toBe(true);
    expect(pkg.devDependencies.ai).toMatch(/^7\.\d+\.\d+$/);
    for (const [name, version] of Object.entries({ ...pkg.dependencies, ...pkg.devDependencies })) expect(version, name).toMatch(/^\d+\.\d+\.\d+$/);
    expect(Object.keys(pkg.exports)).toEqual(expect.arrayContaining(['./mcp', './ai-sdk']));
  });

  it('takes the MCP SDK as a required peer with a 1.x range (one copy beside the host), pinned for development', () => {
    expect(pkg.dependencies['@modelcontextprotocol/sdk']).toBeUndefined();
    expect(pkg.peerDependencies['@modelcontextprotocol/sdk']).toMatch(/^\^1\.\d+\.\d+$/);
    expect(pkg.peerDependenciesMeta['@modelcontextprotocol/sdk']?.optional).not.toBe(true);
    // The tests run on the pin; scripts/pack-check.sh serves with the range's lower bound too.
    const [min, pin] = [pkg.peerDependencies['@modelcontextprotocol/sdk']!.slice(1), pkg.devDependencies['@modelcontextprotocol/sdk']!];
    const parts = (v: string) => v.split('.').map(Number) as [number, number, number];
    const [a, b] = [parts(min), parts(pin)];
    expect(b[0]).toBe(1);
    expect(b[1] > a[1] || (b[1] === a[1] && b[2] >= a[2]), `${pin} within ^${min}`).toBe(true);
  });

  it('package-lock.json agrees with package.json at the root (so npm install leaves it unchanged)', () => {
    const root = (JSON.parse(read('package-lock.json')) as { packages: Record<string, Record<string, unknown>> }).packages['']!;
    expect(root.bin).toEqual(pkg.bin);
    expect(root.dependencies).toEqual(pkg.dependencies);
    expect(root.devDependencies).toEqual(pkg.devDependencies);
    expect(root.peerDependencies).toEqual(pkg.peerDependencies);
    expect(root.license).toBe(pkg.license);
  });
});
