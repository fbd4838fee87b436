import fc from 'fast-check';
import { applyEdit, decodeText, textForWrite } from '../../seam/index.js';
import type { FileSystem, FsErrorCode, FsTarget, FsWriteIntent } from '../../seam/index.js';
import { notTextArb, oldPickArb, pickOld, replacementArb, textArb, type OldPick } from '../arbitraries.js';
import {
  BOM,
  bytesEqual,
  concatBytes,
  deepEqual,
  equal,
  fail,
  ok,
  rejects,
  seedFile,
  settle,
  show,
  utf8,
  type Rule,
  type RuleContext,
} from '../harness.js';
import type { OutOfBandHooks } from '../types.js';

/**
 * M1: random command sequences against a pure model (a map of name → bytes), with every
 * expectation derived from the seam's pure text functions, and after every command a
 * differential check that stat, readText, readBytes and listDir agree with each other and the model.
 */

/** Names chosen so that UTF-16 order and code-point order differ (ﬀ is U+FB00, 😀 is U+1F600). */
const NAMES = ['a.txt', 'B.txt', 'ﬀ.txt', '😀.txt', 'sub/c.txt'] as const;
type Name = (typeof NAMES)[number];
const NEVER_MINTED = 'dsh-fs-conformance:never-minted';

interface Model {
  readonly files: Map<Name, Uint8Array>;
  /** Directories that exist: '' (the run directory) and 'sub', once something was written there. */
  readonly dirs: Set<string>;
  /** Versions last reported per file. */
  readonly current: Map<Name, string>;
  /** Every version seen per file, with the bytes it stood for (V1 across the whole run). */
  readonly history: Map<Name, Map<string, string>>;
  /** Versions seen per file and content (V2 across the whole run). */
  readonly byContent: Map<Name, Map<string, string>>;
  readonly stableVersions: boolean;
}

interface Real {
  readonly fs: FileSystem;
  readonly dir: string;
  readonly targets: ReadonlyMap<Name, FsTarget>;
  readonly dirTarget: FsTarget;
  readonly subTarget: FsTarget;
  readonly oob: OutOfBandHooks | undefined;
}

type Cmd = fc.AsyncCommand<Model, Real>;

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const nameArb = fc.constantFrom(...NAMES);
const guardArb = fc.constantFrom('none', 'current', 'stale') as fc.Arbitrary<'none' | 'current' | 'stale'>;

function staleVersion(m: Model, name: Name): string {
  const now = m.files.get(name);
  const history = m.history.get(name);
  if (history) {
    for (const [version, content] of history) if (now === undefined || content !== hex(now)) return version;
  }
  return NEVER_MINTED;
}

function intentFor(m: Model, name: Name, kind: 'none' | 'create' | 'current' | 'stale'): FsWriteIntent | undefined {
  if (kind === 'none') return undefined;
  if (kind === 'create') return { kind: 'createIfAbsent' };
  if (kind === 'current') return { kind: 'replaceIfVersion', version: (m.current.get(name) ?? NEVER_MINTED) as never };
  return { kind: 'replaceIfVersion', version: staleVersion(m, name) as never };
}

/** What a guard check says, before anything else about the file. */
function guardVerdict(m: Model, name: Name, intent: FsWriteIntent | undefined): FsErrorCode | undefined {
  const exists = m.files.has(name);
  if (intent === undefined) return undefined;
  if (intent.kind === 'createIfAbsent') return exists ? 'FS_NOT_OBSERVED' : undefined;
  return exists && intent.version === m.current.get(name) ? undefined : 'FS_STALE_VERSION';
}

function publish(m: Model, name: Name, bytes: Uint8Array | undefined): void {
  if (bytes === undefined) {
    m.files.delete(name);
    m.current.delete(name);
    return;
  }
  m.files.set(name, bytes);
  m.dirs.add('');
  if (name.startsWith('sub/')) m.dirs.add('sub');
}

async function expectOutcome<T>(
  what: string,
  promise: Promise<T>,
  expected: FsErrorCode | undefined,
): Promise<T | undefined> {
  const got = await settle(promise, what);
  if (expected === undefined) {
    if (!got.ok) fail(`${what}: expected success, got ${got.error.code}: ${got.error.message}`);
    return got.value;
  }
  if (got.ok) fail(`${what}: expected ${expected}, but it succeeded with ${show(got.value)}`);
  equal(got.error.code, expected, `${what}: error code (${got.error.message})`);
  return undefined;
}

class WriteCmd implements Cmd {
  constructor(
    readonly name: Name,
    readonly content: string,
    readonly raw: Uint8Array | undefined,
    readonly intent: 'none' | 'create' | 'current' | 'stale',
  ) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const before = m.files.get(this.name);
    const intent = intentFor(m, this.name, this.intent);
    const expectedBytes = this.raw ?? textForWrite(this.content, before);
    const verdict = guardVerdict(m, this.name, intent);
    const target = r.targets.get(this.name)!;
    const out = await expectOutcome(
      `${this}`,
      this.raw ? r.fs.writeBytes(target, this.raw, intent) : r.fs.writeText(target, this.content, intent),
      verdict,
    );
    if (out) {
      equal(out.operation, before === undefined ? 'create' : 'update', `${this}: operation`);
      equal(out.size, expectedBytes.byteLength, `${this}: size`);
      publish(m, this.name, expectedBytes);
      await verify(m, r, `after ${this}`, { name: this.name, version: out.version });
    } else await verify(m, r, `after ${this}`);
  }
  toString = () => `${this.raw ? 'writeBytes' : 'writeText'}(${this.name}, ${this.raw ? show(this.raw) : show(this.content)}, ${this.intent})`;
}

class EditCmd implements Cmd {
  constructor(
    readonly name: Name,
    readonly pick: OldPick,
    readonly newString: string,
    readonly replaceAll: boolean,
    readonly guard: 'none' | 'current' | 'stale',
  ) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const before = m.files.get(this.name);
    let decoded: { text: string; bom: boolean } | undefined;
    let notText = false;
    try {
      decoded = before === undefined ? undefined : decodeText(before, 'model');
    } catch {
      notText = true;
    }
    const oldString = pickOld(decoded?.text ?? '', this.pick);
    const intent = this.guard === 'none' ? undefined : intentFor(m, this.name, this.guard);
    const request = { oldString, newString: this.newString, replaceAll: this.replaceAll };
    const what = `editText(${this.name}, ${show(request)}, guard ${this.guard})`;
    let expected: FsErrorCode | undefined;
    let result: Uint8Array | undefined;
    const edit = applyEdit(decoded?.text ?? '', oldString, this.newString, this.replaceAll);
    if (!edit.ok && edit.error.code === 'FS_INVALID_ARGUMENT') expected = 'FS_INVALID_ARGUMENT';
    else if (before === undefined) expected = intent ? 'FS_STALE_VERSION' : 'FS_NOT_FOUND';
    else if ((expected = guardVerdict(m, this.name, intent)) !== undefined) {
      // G4: the guard is checked first.
    } else if (notText) expected = 'FS_NOT_TEXT';
    else if (!edit.ok) expected = edit.error.code;
    else result = concatBytes(decoded!.bom ? BOM : new Uint8Array(), utf8(edit.text));
    const target = r.targets.get(this.name)!;
    const guard = intent?.kind === 'replaceIfVersion' ? { version: intent.version } : undefined;
    const out = await expectOutcome(what, r.fs.editText(target, request, guard), expected);
    if (out && edit.ok) {
      equal(out.replacements, edit.replacements, `${what}: replacements`);
      deepEqual(out.lines, edit.lines, `${what}: line ranges`);
      publish(m, this.name, result);
      await verify(m, r, `after ${what}`, { name: this.name, version: out.version });
    } else await verify(m, r, `after ${what}`);
  }
  toString = () => `editText(${this.name}, ${show(this.pick)} → ${show(this.newString)}, all ${this.replaceAll}, guard ${this.guard})`;
}

class RemoveCmd implements Cmd {
  constructor(
    readonly name: Name,
    readonly intent: 'none' | 'current' | 'stale',
  ) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const intent = intentFor(m, this.name, this.intent);
    const expected = m.files.has(this.name) ? guardVerdict(m, this.name, intent) : intent ? 'FS_STALE_VERSION' : 'FS_NOT_FOUND';
    await expectOutcome(`${this}`, r.fs.remove(r.targets.get(this.name)!, intent), expected);
    if (expected === undefined) publish(m, this.name, undefined);
    await verify(m, r, `after ${this}`);
  }
  toString = () => `remove(${this.name}, ${this.intent})`;
}

class ReadCmd implements Cmd {
  constructor(
    readonly name: Name,
    readonly maxBytes: number,
  ) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const target = r.targets.get(this.name)!;
    const bytes = m.files.get(this.name);
    const expected = bytes === undefined ? 'FS_NOT_FOUND' : bytes.byteLength > this.maxBytes ? 'FS_TOO_LARGE' : undefined;
    const got = await expectOutcome(`${this}`, r.fs.readBytes(target, { maxBytes: this.maxBytes }), expected);
    if (got && bytes) bytesEqual(got.bytes, bytes, `${this}`);
    if (bytes !== undefined) {
      let text: string | undefined;
      try {
        text = decodeText(bytes, 'model').text;
      } catch {
        text = undefined;
      }
      const stream = await expectOutcome(`streamText(${this.name})`, r.fs.streamText(target), text === undefined ? 'FS_NOT_TEXT' : undefined);
      if (stream) {
        let streamed = '';
        for await (const chunk of stream.chunks) streamed += chunk;
        equal(streamed, text, `streamText(${this.name})`);
        equal(stream.version as string, m.current.get(this.name), `streamText(${this.name}) version`);
      }
    }
    await verify(m, r, `after ${this}`);
  }
  toString = () => `read(${this.name}, maxBytes ${this.maxBytes})`;
}

class OutOfBandCmd implements Cmd {
  constructor(
    readonly name: Name,
    readonly bytes: Uint8Array | undefined,
  ) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const path = `${r.dir}/${this.name}`;
    if (this.bytes === undefined) {
      if (!m.files.has(this.name)) return;
      await r.oob!.remove(path);
    } else await r.oob!.writeBytes(path, this.bytes);
    publish(m, this.name, this.bytes);
    await verify(m, r, `after ${this}`);
  }
  toString = () => `outOfBand.${this.bytes ? `writeBytes(${this.name}, ${show(this.bytes)})` : `remove(${this.name})`}`;
}

/** Differential check: every way of looking at the files agrees, and agrees with the model. */
async function verify(m: Model, r: Real, when: string, returned?: { name: Name; version: string }): Promise<void> {
  for (const name of NAMES) {
    const target = r.targets.get(name)!;
    const bytes = m.files.get(name);
    const info = await r.fs.stat(target);
    if (bytes === undefined) {
      equal(info, undefined, `${when}: stat(${name}) of an absent file`);
      await expectOutcome(`${when}: readText(${name})`, r.fs.readText(target), 'FS_NOT_FOUND');
      continue;
    }
    ok(info !== undefined, `${when}: stat(${name}) found nothing, the model holds ${show(bytes)}`);
    equal(info.type, 'file', `${when}: stat(${name}).type`);
    equal(info.size, bytes.byteLength, `${when}: stat(${name}).size`);
    const version = info.version as string;
    if (returned?.name === name) equal(version, returned.version, `${when}: the returned version and stat(${name}) (V3)`);
    const history = m.history.get(name) ?? new Map<string, string>();
    m.history.set(name, history);
    const seen = history.get(version);
    ok(seen === undefined || seen === hex(bytes), `${when}: version ${version} of ${name} stood for other bytes earlier (V1)`);
    history.set(version, hex(bytes));
    if (m.stableVersions) {
      const contents = m.byContent.get(name) ?? new Map<string, string>();
      m.byContent.set(name, contents);
      const earlier = contents.get(hex(bytes));
      ok(earlier === undefined || earlier === version, `${when}: ${name} holds bytes it held before, under a new version (V2)`);
      contents.set(hex(bytes), version);
    }
    m.current.set(name, version);
    const raw = await r.fs.readBytes(target, { maxBytes: bytes.byteLength });
    bytesEqual(raw.bytes, bytes, `${when}: readBytes(${name})`);
    equal(raw.version as string, version, `${when}: readBytes(${name}).version`);
    let decoded: { text: string; bom: boolean } | undefined;
    try {
      decoded = decodeText(bytes, 'model');
    } catch {
      decoded = undefined;
    }
    const read = await expectOutcome(`${when}: readText(${name})`, r.fs.readText(target), decoded ? undefined : 'FS_NOT_TEXT');
    if (read && decoded) {
      equal(read.text, decoded.text, `${when}: readText(${name}).text`);
      equal(read.bom, decoded.bom, `${when}: readText(${name}).bom`);
      equal(read.size, bytes.byteLength, `${when}: readText(${name}).size`);
      equal(read.version as string, version, `${when}: readText(${name}).version`);
    }
  }
  await verifyListing(m, r, when, '', r.dirTarget);
  await verifyListing(m, r, when, 'sub', r.subTarget);
}

async function verifyListing(m: Model, r: Real, when: string, dir: '' | 'sub', target: FsTarget): Promise<void> {
  const prefix = dir === '' ? '' : `${dir}/`;
  const expected = new Map<string, { type: 'file' | 'directory'; name?: Name }>();
  for (const name of NAMES) {
    if (!name.startsWith(prefix)) continue;
    const rest = name.slice(prefix.length);
    if (rest.includes('/')) continue;
    if (m.files.has(name)) expected.set(rest, { type: 'file', name });
  }
  if (dir === '' && m.dirs.has('sub')) expected.set('sub', { type: 'directory' });
  const what = `${when}: listDir(${dir || '.'})`;
  const listed = await settle(r.fs.listDir(target), what);
  if (!listed.ok) {
    // A directory that was never created, or whose files are all gone, may be absent.
    ok(listed.error.code === 'FS_NOT_FOUND' && expected.size === 0, `${what}: ${listed.error.code}: ${listed.error.message}`);
    return;
  }
  const names = listed.value.map((e) => e.name);
  const sorted = [...names].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  deepEqual(names, sorted, `${what}: entries must be sorted by code point`);
  deepEqual(names, [...expected.keys()].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))), `${what}: names`);
  for (const entry of listed.value) {
    const want = expected.get(entry.name)!;
    equal(entry.type, want.type, `${what}: type of ${entry.name}`);
    if (want.name) {
      equal(entry.size, m.files.get(want.name)!.byteLength, `${what}: size of ${entry.name}`);
      equal(entry.target.targetKey as string, r.targets.get(want.name)!.targetKey, `${what}: target of ${entry.name}`);
    }
  }
}

function commandArbs(withOutOfBand: boolean): fc.Arbitrary<Cmd>[] {
  const contentArb = fc.oneof({ weight: 5, arbitrary: textArb.map((t) => ({ text: t, raw: undefined })) }, { weight: 1, arbitrary: notTextArb.map((n) => ({ text: '', raw: n.bytes })) }, { weight: 1, arbitrary: textArb.map((t) => ({ text: t, raw: concatBytes(BOM, utf8(t)) })) });
  const arbs: fc.Arbitrary<Cmd>[] = [
    fc
      .tuple(nameArb, contentArb, fc.constantFrom('none', 'none', 'create', 'current', 'stale') as fc.Arbitrary<'none' | 'create' | 'current' | 'stale'>)
      .map(([name, c, intent]) => new WriteCmd(name, c.text, c.raw, intent)),
    fc
      .tuple(nameArb, oldPickArb, replacementArb, fc.boolean(), guardArb)
      .map(([name, pick, n, all, guard]) => new EditCmd(name, pick, n, all, guard)),
    fc.tuple(nameArb, guardArb).map(([name, intent]) => new RemoveCmd(name, intent)),
    fc.tuple(nameArb, fc.oneof(fc.nat(8), fc.constant(1 << 20))).map(([name, max]) => new ReadCmd(name, max)),
  ];
  if (withOutOfBand) {
    arbs.push(
      fc
        .tuple(nameArb, fc.option(textArb.map(utf8), { freq: 4, nil: undefined }))
        .map(([name, bytes]) => new OutOfBandCmd(name, bytes)),
    );
  }
  return arbs;
}

export const modelRules: Rule[] = [
  {
    id: 'M1',
    title: 'command sequences agree with a reference model',
    async run(ctx: RuleContext) {
      const { fs } = ctx;
      const oob = ctx.subject.outOfBand;
      await ctx.example('readBytes past maxBytes, and names whose UTF-16 and code-point orders differ', async () => {
        const dir = ctx.dir();
        const { target } = await seedFile(fs, `${dir}/big.txt`, 'x'.repeat(100));
        await rejects(fs.readBytes(target, { maxBytes: 99 }), 'FS_TOO_LARGE', 'readBytes of 100 bytes with maxBytes 99 (never truncated)');
        equal((await fs.readBytes(target, { maxBytes: 100 })).bytes.byteLength, 100, 'readBytes with maxBytes equal to the size');
        // U+FB00 sorts after U+1F600 in UTF-16 units (0xFB00 > 0xD83D) but before it by code point.
        for (const name of ['😀.txt', 'ﬀ.txt', 'z.txt']) await seedFile(fs, `${dir}/${name}`, name);
        const names = (await fs.listDir(await fs.resolve(dir))).map((e) => e.name);
        deepEqual(names, ['big.txt', 'z.txt', 'ﬀ.txt', '😀.txt'], 'listDir order is by code point');
      });
      await ctx.check(
        'write, guarded write, edit, remove and read over a few paths',
        fc.asyncProperty(fc.commands(commandArbs(oob !== undefined), { maxCommands: 30 }), async (cmds) => {
          const dir = ctx.dir();
          const targets = new Map<Name, FsTarget>();
          for (const name of NAMES) targets.set(name, await fs.resolve(`${dir}/${name}`));
          const model: Model = {
            files: new Map(),
            dirs: new Set(),
            current: new Map(),
            history: new Map(),
            byContent: new Map(),
            stableVersions: ctx.subject.capabilities?.stableVersions !== false,
          };
          const real: Real = { fs, dir, targets, dirTarget: await fs.resolve(dir), subTarget: await fs.resolve(`${dir}/sub`), oob };
          await fc.asyncModelRun(() => ({ model, real }), cmds);
        }),
        0.75,
      );
    },
  },
];
