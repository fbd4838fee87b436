#!/usr/bin/env bash
# Packs the package as npm would publish it and uses it the way a consumer does, in a scratch
# directory: install the tarball without the optional peers (fewer than half the packages it once
# pulled in), import what needs none and see each other entry refuse clearly, install the peers,
# import every export (ESM), type-check a TypeScript consumer with
# moduleResolution nodenext and bundler, and run the bin. Registry packages come from npm's cache
# when they are there (--prefer-offline); the toolchain (tsc) is this checkout's.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/dsh-fs-pack-check.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cd "$repo"

version() { node -p "require('$repo/package-lock.json').packages['node_modules/$1'].version"; }

echo "pack-check: packing"
tarball="$(npm pack --silent --pack-destination "$work" | tail -n 1)"
tarball="$work/$tarball"

# What ships, measured with npm pack --dry-run on 0.1.0 (unreleased changes included): 1.36 MB
# packed, 5.6 MB unpacked, 1,264 files. dist with its source maps; src, the maps' sources (and the
# dsh-fs-source condition's files), 0.39 MB packed; docs; examples and bench/RESULTS.md, which the
# docs link to (the rest of bench/ needs the repository's dev dependencies: 0.05 MB more, left
# out). Without src the maps would name files that are not there; without src and the maps the
# tarball would be 0.74 MB. With review by hunk and its page, merge, runs on overlayfs, quotas and
# the commit journal (code in dist and src alike, no new asset but the page's 76 KB screenshot):
# 1.69 MB packed, 6.7 MB unpacked. A tarball past 2 MB has taken in something new: look before raising it.
size="$(stat -c %s "$tarball")"
echo "pack-check: the tarball is $size bytes"
[ "$size" -lt 2000000 ] || { echo "pack-check: the tarball is $size bytes, past 2 MB (1.69 MB measured); see what it took in"; exit 1; }

# The tarball: no install-time scripts, and the files the README and the exports point at.
tar -xzf "$tarball" -C "$work"
node --input-type=module - "$work/package" <<'JS'
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
const dir = process.argv[2];
const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
const fail = (m) => { console.error(`pack-check: ${m}`); process.exit(1); };
for (const s of ['preinstall', 'install', 'postinstall', 'prepare']) if (pkg.scripts?.[s]) fail(`the package has a "${s}" script`);
for (const f of ['LICENSE', 'README.md', 'dist/cli/main.js']) if (!existsSync(join(dir, f))) fail(`${f} is not in the tarball`);
const pages = ['README.md', ...readdirSync(join(dir, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
for (const page of pages) {
  const text = readFileSync(join(dir, page), 'utf8');
  for (const [, link] of text.matchAll(/\]\(((?!https?:|#)[^)#]+)/g)) {
    if (!existsSync(join(dir, dirname(page), link))) fail(`${page} links to ${link}, which is not in the tarball`);
  }
}
// Every source map names sources that ship with it.
for (const file of readdirSync(join(dir, 'dist'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.map'))) {
  const map = JSON.parse(readFileSync(join(dir, 'dist', file), 'utf8'));
  for (const source of map.sources) if (!existsSync(join(dir, 'dist', dirname(file), source))) fail(`dist/${file} names ${source}, which is not in the tarball`);
}
for (const [sub, target] of Object.entries(pkg.exports)) {
  const files = typeof target === 'string' ? [target] : Object.entries(target).filter(([c]) => c !== 'dsh-fs-source').map(([, f]) => f);
  for (const f of files) if (!existsSync(join(dir, f))) fail(`export ${sub} points at ${f}, which is not in the tarball`);
}
JS

echo "pack-check: installing into a scratch consumer, without the optional peers"
consumer="$work/consumer"
mkdir -p "$consumer"
cd "$consumer"
cat > package.json <<JSON
{ "name": "consumer", "version": "0.0.0", "private": true, "type": "module" }
JSON
npm install --prefer-offline --no-audit --no-fund --loglevel=error "$tarball" > install.log 2>&1 || { cat install.log; exit 1; }
# Before the peers became optional and fast-glob and pg left the dependencies, the tarball
# installed 171 packages (measured on 0.1.0 with npm 11); a consumer now gets fewer than half.
installed="$(node -p "Object.keys(require('./node_modules/.package-lock.json').packages).filter((k) => k.startsWith('node_modules/')).length")"
echo "pack-check: $installed packages installed"
[ "$installed" -lt $((171 / 2)) ] || { echo "pack-check: the tarball installs $installed packages, not fewer than half of 171"; exit 1; }
for peer in @modelcontextprotocol/sdk fast-check pg fuse-native libsql ai vitest; do
  [ ! -e "node_modules/$peer" ] || { echo "pack-check: the optional peer $peer was installed"; exit 1; }
done

echo "pack-check: importing the entry points that need no peer, and each peer's clear refusal"
node --input-type=module - <<'JS'
const fail = (m) => { console.error(`pack-check: ${m}`); process.exit(1); };
for (const name of ['dsh-fs', 'dsh-fs/memory', 'dsh-fs/local', 'dsh-fs/overlay', 'dsh-fs/postgres', 'dsh-fs/sqlite', 'dsh-fs/observation-policy', 'dsh-fs/tools', 'dsh-fs/search', 'dsh-fs/mcp', 'dsh-fs/mount', 'dsh-fs/run', 'dsh-fs/ai-sdk', 'dsh-fs/review']) {
  const mod = await import(name);
  if (Object.keys(mod).length === 0) fail(`${name} exports nothing`);
}
// A peer's absence is one FsError naming the package and the command that installs it.
const refusal = (what, err, peer) => {
  if (err?.code !== 'FS_UNSUPPORTED' || !err.message.includes(`npm install ${peer}@`)) fail(`${what} without ${peer}: ${err?.stack ?? err}`);
};
const { createMemoryFs } = await import('dsh-fs/memory');
const fs = createMemoryFs();
await import('dsh-fs/conformance').then(() => fail('dsh-fs/conformance loaded without fast-check'), (err) => refusal('dsh-fs/conformance', err, 'fast-check'));
const { createMcpServer } = await import('dsh-fs/mcp');
try { createMcpServer({ fs }); fail('createMcpServer ran without the MCP SDK'); } catch (err) { refusal('createMcpServer', err, '@modelcontextprotocol/sdk'); }
const { aiSdkTools } = await import('dsh-fs/ai-sdk');
const { createHarness } = await import('dsh-fs');
try { aiSdkTools(createHarness({ fs })); fail('aiSdkTools ran without ai'); } catch (err) { refusal('aiSdkTools', err, 'ai'); }
const { createSqliteFs } = await import('dsh-fs/sqlite');
try { createSqliteFs({ path: ':memory:' }); fail('createSqliteFs ran without libsql'); } catch (err) { refusal('createSqliteFs', err, 'libsql'); }
const { mountFs } = await import('dsh-fs/mount');
await mountFs(fs, '/nonexistent-mountpoint').then(() => fail('mountFs ran without fuse-native'), (err) => {
  if (!/the fuse-native package: install it with: npm install fuse-native@/.test(err?.message)) fail(`mountFs without fuse-native: ${err?.stack ?? err}`);
});
JS
for args in "serve --root ." "status --postgres postgres://127.0.0.1:1/x --workspace w" "status --sqlite ./absent.db"; do
  case "$args" in serve*) peer=@modelcontextprotocol/sdk ;; *--sqlite*) peer=libsql ;; *) peer=pg ;; esac
  if out="$(npx --no-install dsh-fs $args 2>&1 </dev/null)"; then echo "pack-check: dsh-fs $args ran without $peer"; exit 1; fi
  grep -q "needs the package $peer, which is not installed; install it with: npm install $peer@" <<<"$out" || { echo "pack-check: dsh-fs $args without $peer said:"; echo "$out"; exit 1; }
done

echo "pack-check: installing the peers"
npm install --prefer-offline --no-audit --no-fund --loglevel=error \
  "ai@$(version ai)" "@types/node@$(version @types/node)" "@modelcontextprotocol/sdk@$(version @modelcontextprotocol/sdk)" \
  "fast-check@$(version fast-check)" "pg@$(version pg)" > install-peers.log 2>&1 || { cat install-peers.log; exit 1; }

echo "pack-check: importing every export"
node --input-type=module - <<'JS'
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
const pkg = JSON.parse(readFileSync('node_modules/dsh-fs/package.json', 'utf8'));
for (const sub of Object.keys(pkg.exports)) {
  if (sub === './package.json') continue;
  const name = `dsh-fs${sub.slice(1)}`;
  const mod = await import(name);
  if (Object.keys(mod).length === 0) throw new Error(`${name} exports nothing`);
}
const { createMcpServer } = await import('dsh-fs/mcp');
const { createMemoryFs } = await import('dsh-fs/memory');
createMcpServer({ fs: createMemoryFs() });
// require() loads every other entry (Node loads ES modules that way since 20.19)...
const require = createRequire(import.meta.url);
for (const sub of Object.keys(pkg.exports)) {
  if (sub === './package.json' || sub === './conformance') continue;
  if (Object.keys(require(`dsh-fs${sub.slice(1)}`)).length === 0) throw new Error(`require of ${sub} gave nothing`);
}
// ...and says plainly that the conformance entry is ESM-only.
try {
  require('dsh-fs/conformance');
  throw new Error('require("dsh-fs/conformance") did not throw');
} catch (err) {
  if (err.code !== 'ERR_REQUIRE_ESM' || !/ESM-only/.test(err.message)) throw err;
}
JS

echo "pack-check: type-checking a TypeScript consumer (nodenext and bundler)"
cat > consumer.ts <<'TS'
import { createHarness, type ToolResult } from 'dsh-fs';
import { createMemoryFs } from 'dsh-fs/memory';
import { createLocalFs } from 'dsh-fs/local';
import { createOverlayFs } from 'dsh-fs/overlay';
import { createPostgresFs } from 'dsh-fs/postgres';
import { createSqliteFs } from 'dsh-fs/sqlite';
import { createObservationPolicy } from 'dsh-fs/observation-policy';
import { fsTools, isImageValue, searchTools, toolDefinitions, type ReadResultValue } from 'dsh-fs/tools';
import { createMcpServer } from 'dsh-fs/mcp';
import { aiSdkTools } from 'dsh-fs/ai-sdk';
import { runConformance } from 'dsh-fs/conformance';

const fs = createMemoryFs({ files: { '/w/a.txt': 'x\n' }, cwd: '/w' });
const ctx = createHarness({ fs, plugins: [createObservationPolicy(), fsTools(), searchTools()] });
const r: ToolResult<ReadResultValue> = await ctx.tools.execute('read', { file_path: 'a.txt' }, { owner: 's' });
const code: string | undefined = r.isError ? r.error.code : isImageValue(r.value) ? r.value.mediaType : r.value.lines[0]?.text;
const anthropic: string = toolDefinitions()[0]!.input_schema.type as string;
const strict: boolean | undefined = toolDefinitions({ format: 'openai-strict' })[0]!.function.strict;
const server = createMcpServer({ fs });
const tools = aiSdkTools(ctx);
export { code, anthropic, strict, server, tools, createLocalFs, createOverlayFs, createPostgresFs, createSqliteFs, runConformance };
TS
for resolution in nodenext bundler; do
  module=$([ "$resolution" = nodenext ] && echo nodenext || echo esnext)
  cat > "tsconfig.$resolution.json" <<JSON
{ "compilerOptions": { "target": "ES2022", "lib": ["ES2024"], "module": "$module", "moduleResolution": "$resolution",
  "strict": true, "noEmit": true, "skipLibCheck": true, "types": ["node"] }, "files": ["consumer.ts"] }
JSON
  node "$repo/node_modules/typescript/bin/tsc" -p "tsconfig.$resolution.json"
done

echo "pack-check: running the bin"
npx --no-install dsh-fs --help | grep -q 'dsh-fs serve' || { echo 'pack-check: npx dsh-fs --help did not print the help'; exit 1; }
echo "pack-check: serving over MCP with the oldest SDK the peer range admits"
oldest="$(node -p "require('$repo/package.json').peerDependencies['@modelcontextprotocol/sdk'].replace(/^\\^/, '')")"
npm install --prefer-offline --no-audit --no-fund --loglevel=error "@modelcontextprotocol/sdk@$oldest" > install-oldest.log 2>&1 || { cat install-oldest.log; exit 1; }
node --input-type=module - "$oldest" <<'JS'
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createMcpServer } from 'dsh-fs/mcp';
import { createMemoryFs } from 'dsh-fs/memory';
import { fsTools, patchTools, textEditorTool } from 'dsh-fs/tools';
const installed = JSON.parse(readFileSync('node_modules/@modelcontextprotocol/sdk/package.json', 'utf8')).version;
if (installed !== process.argv[2]) throw new Error(`expected the MCP SDK ${process.argv[2]}, found ${installed}`);
const fs = createMemoryFs({ files: { '/w/a.txt': 'one\ntwo\n' }, cwd: '/w' });
const server = createMcpServer({ fs, tools: [fsTools(), patchTools(), textEditorTool()] });
const [a, b] = InMemoryTransport.createLinkedPair();
await server.connect(a);
const client = new Client({ name: 'pack-check', version: '0' });
await client.connect(b);
const read = await client.callTool({ name: 'read', arguments: { file_path: 'a.txt' } });
if (read.structuredContent?.totalLines !== 2) throw new Error(`read: ${JSON.stringify(read)}`);
const patch = '*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+TWO\n*** End Patch';
const applied = await client.callTool({ name: 'apply_patch', arguments: { input: patch } });
if (applied.isError) throw new Error(`apply_patch: ${JSON.stringify(applied)}`);
if ((await fs.readText(await fs.resolve('a.txt'))).text !== 'one\nTWO\n') throw new Error('the patch did not land');
await client.close();
JS
echo "pack-check: ok"
