import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BoundedStdioTransport, TopLevelScanner } from '../../src/cli/stdio-transport.js';

function setup(max: number) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  let out = '';
  stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  const logs: string[] = [];
  const t = new BoundedStdioTransport({ stdin, stdout, maxRequestBytes: max, log: (l) => logs.push(l) });
  const messages: unknown[] = [];
  t.onmessage = (m) => messages.push(m);
  return { stdin, stdout, t, messages, logs, out: () => out };
}

describe('BoundedStdioTransport', () => {
  it('reads messages split across chunks, skips an oversized one and answers its id', async () => {
    const s = setup(200);
    await s.t.start();
    const ok = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
    const big = JSON.stringify({ jsonrpc: '2.0', method: 'tools/call', params: { name: 'write', arguments: { content: 'y'.repeat(5000) } }, id: 7 });
    const text = `${ok}\r\n${big}\n\n${ok}\n`;
    for (let i = 0; i < text.length; i += 7) s.stdin.write(text.slice(i, i + 7));
    await new Promise((r) => setImmediate(r));
    expect(s.messages).toEqual([JSON.parse(ok), JSON.parse(ok)]);
    const replies = s.out().trim().split('\n').map((l) => JSON.parse(l) as { id: number; result: { isError: boolean } });
    expect(replies).toHaveLength(1);
    expect(replies[0]).toMatchObject({ id: 7, result: { isError: true, _meta: { 'dsh-fs/error': { name: 'FsError', code: 'FS_TOO_LARGE' } } } });
    expect(s.logs[0]).toMatch(/^refused a message of \d+ bytes \(tools\/call\): over the limit of 200 bytes/);
  });

  it('a failing stdin ends it as failed; the end of stdin as not failed', async () => {
    const a = setup(100);
    await a.t.start();
    a.stdin.emit('error', Object.assign(new Error('EIO: i/o error, read'), { code: 'EIO' }));
    expect(await a.t.ended).toEqual({ reason: 'cannot read stdin: EIO: i/o error, read', failed: true });
    const b = setup(100);
    await b.t.start();
    b.stdin.end();
    b.stdin.resume();
    expect(await b.t.ended).toEqual({ reason: 'the client closed stdin', failed: false });
  });
});

describe('TopLevelScanner', () => {
  it('finds the top-level id and method of any JSON-RPC object, wherever they are and whatever the other members hold', () => {
    const member = fc.tuple(fc.string().filter((k) => k !== 'id' && k !== 'method'), fc.jsonValue());
    fc.assert(
      fc.property(
        fc.array(member, { maxLength: 4 }),
        fc.oneof(fc.string({ maxLength: 30 }), fc.integer()),
        fc.string({ maxLength: 30 }),
        fc.nat(),
        fc.nat(),
        fc.nat({ max: 20 }),
        (members, id, method, at1, at2, piece) => {
          const entries: [string, unknown][] = [...members];
          entries.splice(at1 % (entries.length + 1), 0, ['id', id]);
          entries.splice(at2 % (entries.length + 1), 0, ['method', method]);
          const text = `{${entries.map(([k, v]) => `${JSON.stringify(k)} : ${JSON.stringify(v)}`).join(' ,')}}`;
          const bytes = Buffer.from(text, 'utf8');
          const scanner = new TopLevelScanner();
          const size = piece + 1;
          for (let i = 0; i < bytes.length; i += size) scanner.feed(bytes.subarray(i, i + size));
          expect(scanner.result()).toEqual({ id, method });
        },
      ),
    );
  });
});
