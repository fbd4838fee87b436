import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PEERS } from '../src/peers.js';

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

  it('takes version ranges for dependencies and peers, and pins devDependencies exactly', () => {
    for (const [name, version] of Object.entries(pkg.dependencies)) expect(version, name).toMatch(/^\^\d+\.\d+\.\d+$/);
    for (const [name, version] of Object.entries(pkg.peerDependencies)) expect(version, name).toMatch(/^(\^|>=)\d+\.\d+\.\d+( \|\| \^\d+\.\d+\.\d+)*$/);
    for (const [name, version] of Object.entries(pkg.devDependencies)) expect(version, name).toMatch(/^\d+\.\d+\.\d+$/);
    expect(pkg).not.toHaveProperty('optionalDependencies');
    // Only what src imports at run time is a dependency.
    expect(Object.keys(pkg.dependencies).sort()).toEqual(['braces', 'diff', 'ignore', 'memfs', 'node-diff3', 'picomatch', 'zod']);
  });

  it('makes every peer optional, keeps each as a pinned devDependency, and names the same ranges in its errors', () => {
    expect(Object.keys(pkg.peerDependencies).sort()).toEqual(['@modelcontextprotocol/sdk', 'ai', 'fast-check', 'fuse-native', 'libsql', 'pg', 'vitest']);
    for (const name of Object.keys(pkg.peerDependencies)) {
      expect(pkg.peerDependenciesMeta[name]?.optional, name).toBe(true);
      expect(pkg.devDependencies[name], name).toMatch(/^\d+\.\d+\.\d+$/);
      expect(pkg.dependencies[name], name).toBeUndefined();
    }
    for (const [name, range] of Object.entries(PEERS)) expect(pkg.peerDependencies[name], name).toBe(range);
    expect(Object.keys(pkg.exports)).toEqual(expect.arrayContaining(['./mcp', './ai-sdk']));
  });

  it('takes each peer with a range that admits its development pin', () => {
    const parts = (v: string) => v.split('.').map(Number) as [number, number, number];
    // One caret range of a union (`^6.0.0 || ^7.0.0`) admits the pin.
    const admits = (caret: string, pin: [number, number, number]) => {
      const min = parts(caret.slice(1));
      return pin[0] === min[0] && (pin[1] > min[1] || (pin[1] === min[1] && pin[2] >= min[2]));
    };
    for (const [name, range] of Object.entries(pkg.peerDependencies)) {
      if (!range.startsWith('^')) continue;
      const pin = parts(pkg.devDependencies[name]!);
      expect(range.split(' || ').some((caret) => admits(caret, pin)), `${name} ${pkg.devDependencies[name]} within ${range}`).toBe(true);
    }
  });

  it('package-lock.json agrees with package.json at the root (so npm install leaves it unchanged)', () => {
    const root = (JSON.parse(read('package-lock.json')) as { packages: Record<string, Record<string, unknown>> }).packages['']!;
    expect(root.bin).toEqual(pkg.bin);
    expect(root.dependencies).toEqual(pkg.dependencies);
    expect(root.devDependencies).toEqual(pkg.devDependencies);
    expect(root.peerDependencies).toEqual(pkg.peerDependencies);
    expect(root.peerDependenciesMeta).toEqual(pkg.peerDependenciesMeta);
    expect(root.license).toBe(pkg.license);
  });
});
