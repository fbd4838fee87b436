import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { FsError, grep, type FileSystem } from '../../src/index.js';

describe('grep returns only after every read it started has ended', () => {
  it('stopped at maxMatches while another file is still being read: that read ends first', async () => {
    const memory = createMemoryFs({ cwd: '/p', files: { 'a.txt': 'foo\n'.repeat(5), 'b.txt': 'foo\n' } });
    let bEnded = false;
    // b's read ends only once grep aborts it, and a turn of the event loop later, as a real read would.
    const fs = new Proxy(memory, {
      get(target, prop, receiver) {
        if (prop !== 'streamText') return Reflect.get(target, prop, receiver) as unknown;
        return (...args: Parameters<FileSystem['streamText']>) => {
          const [file, options] = args;
          if (file.targetKey !== '/p/b.txt') return target.streamText(...args);
          return new Promise((_, reject) => {
            const signal = options?.signal;
            const stop = () =>
              setImmediate(() => {
                bEnded = true;
                reject(new FsError('FS_ABORTED', 'cannot read "/p/b.txt": aborted'));
              });
            if (signal?.aborted) stop();
            else signal?.addEventListener('abort', stop, { once: true });
          });
        };
      },
    });
    const result = await grep(fs, 'foo', { maxMatches: 2 });
    const endedWhenReturned = bEnded;
    expect(result.truncated).toBe('matches');
    expect(result.matches.map((m) => [m.path, m.line])).toEqual([
      ['/p/a.txt', 1],
      ['/p/a.txt', 2],
    ]);
    expect(endedWhenReturned, 'the read of b.txt ended before grep returned').toBe(true);
  });
});

describe('grep over a store that listens to the signal on every read', () => {
  it('warns of no listener leak: each read in flight may listen to grep’s signal', async () => {
    const files = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`f${i}.txt`, `foo ${i}\n`]));
    const memory = createMemoryFs({ cwd: '/p', files });
    // As the PostgreSQL client does: listeners on the signal while the call runs, removed after.
    const fs = new Proxy(memory, {
      get(target, prop, receiver) {
        if (prop !== 'streamText') return Reflect.get(target, prop, receiver) as unknown;
        return async (...args: Parameters<FileSystem['streamText']>) => {
          const signal = args[1]?.signal;
          const listeners = [() => {}, () => {}, () => {}];
          for (const l of listeners) signal?.addEventListener('abort', l);
          try {
            await new Promise((done) => setImmediate(done));
            return await target.streamText(...args);
          } finally {
            for (const l of listeners) signal?.removeEventListener('abort', l);
          }
        };
      },
    });
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const result = await grep(fs, 'foo', { concurrency: 16 });
      expect(result.matches.length).toBe(40);
      await new Promise((done) => setImmediate(done));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });
});
