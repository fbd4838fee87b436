import { constants, promises as nodeFsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import type { LocalIo } from '../../src/backends/local/provider.js';

/** The errors injected: a full disk, a failing device, a permission refused mid-operation. */
export const ERRNOS = ['ENOSPC', 'EIO', 'EACCES'] as const;
export type Errno = (typeof ERRNOS)[number];

const ERRNO_NUMBERS: Record<Errno, number> = { ENOSPC: -28, EIO: -5, EACCES: -13 };

export interface IoCall {
  /** 1-based position among the calls since the last reset. */
  readonly n: number;
  /** `open`, `lstat`, …, or `handle.writeFile`, `handle.sync`, … for calls on an opened handle. */
  readonly op: string;
  readonly path: string;
  /** For `open`: the flags. */
  readonly flags?: number;
}

const IO_FUNCTIONS = ['open', 'lstat', 'stat', 'readlink', 'realpath', 'readdir', 'mkdir', 'rmdir', 'link', 'rename', 'unlink', 'access'] as const;

/**
 * A `LocalIo` that counts every call the local provider makes, through `fs.promises` and through
 * the handles it opened, and can make the N-th one fail with an errno (as the kernel would), or
 * run a hook just before it (to change a file behind the provider's back at an exact moment).
 *
 * A failing `handle.writeFile` first writes half of its data, as a write that ran out of space
 * would; a failing `handle.close` still closes the descriptor, as close(2) does.
 */
export class FaultyIo {
  readonly io: LocalIo;
  calls: IoCall[] = [];
  /** 1-based call to fail; 0 never. */
  failAt = 0;
  errno: Errno = 'EIO';
  /** The call that was made to fail, once it was. */
  failed: IoCall | undefined;
  /** Runs before call `hookAt` (1-based; 0 never), awaited. */
  hookAt = 0;
  hook: (() => Promise<void> | void) | undefined;
  /**
   * Runs before every call, awaited, for faults placed by what a call is rather than by its
   * position (concurrent calls interleave): returning 'fail' makes the call fail with `errno`.
   */
  intercept: ((call: IoCall) => Promise<'fail' | void> | 'fail' | void) | undefined;
  /** Descriptors opened through this layer and not yet closed. */
  readonly open = new Set<FileHandle>();

  constructor() {
    const io: Record<string, unknown> = {};
    for (const name of IO_FUNCTIONS) {
      const real = nodeFsp[name] as (...args: unknown[]) => Promise<unknown>;
      io[name] = async (...args: unknown[]) => {
        const path = String(args[0]);
        const call = await this.#enter(name, path, name === 'open' ? toFlags(args[1]) : undefined);
        if (call === 'fail') throw this.#error(name, path);
        const result = await real.apply(nodeFsp, args);
        return name === 'open' ? this.#wrap(result as FileHandle, path) : result;
      };
    }
    this.io = io as unknown as LocalIo;
  }

  /** Forgets the calls so far and disarms every fault and hook. */
  reset(): void {
    this.calls = [];
    this.failAt = 0;
    this.failed = undefined;
    this.hookAt = 0;
    this.hook = undefined;
    this.intercept = undefined;
  }

  arm(failAt: number, errno: Errno): void {
    this.reset();
    this.failAt = failAt;
    this.errno = errno;
  }

  async #enter(op: string, path: string, flags?: number): Promise<'fail' | 'run'> {
    const call: IoCall = { n: this.calls.length + 1, op, path, ...(flags === undefined ? {} : { flags }) };
    this.calls.push(call);
    if (call.n === this.hookAt && this.hook) await this.hook();
    if (call.n === this.failAt || (this.intercept && (await this.intercept(call)) === 'fail')) {
      this.failed = call;
      return 'fail';
    }
    return 'run';
  }

  #error(op: string, path: string): Error {
    const errno = this.errno;
    return Object.assign(new Error(`${errno}: injected failure, ${op} '${path}'`), {
      code: errno,
      errno: ERRNO_NUMBERS[errno],
      syscall: op,
      path,
    });
  }

  #wrap(handle: FileHandle, path: string): FileHandle {
    this.open.add(handle);
    const self = this;
    return new Proxy(handle, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target) as unknown;
        if (typeof value !== 'function' || typeof prop !== 'string') return value;
        const method = value as (...args: unknown[]) => Promise<unknown>;
        if (prop === 'close') {
          return async () => {
            if (!self.open.has(target)) return method.call(target);
            const call = await self.#enter('handle.close', path);
            self.open.delete(target);
            await method.call(target);
            if (call === 'fail') throw self.#error('close', path);
          };
        }
        return async (...args: unknown[]) => {
          const call = await self.#enter(`handle.${prop}`, path);
          if (call === 'fail') {
            if (prop === 'writeFile' && args[0] instanceof Uint8Array) {
              const data = args[0];
              await target.write(data, 0, Math.floor(data.byteLength / 2));
            }
            throw self.#error(prop, path);
          }
          return method.apply(target, args);
        };
      },
    });
  }
}

function toFlags(flags: unknown): number {
  if (typeof flags === 'number') return flags;
  if (flags === undefined || flags === 'r') return constants.O_RDONLY;
  return -1;
}

/** Whether an `open` call created a file (the provider's temp files are the only ones it creates). */
export function isCreate(call: IoCall): boolean {
  return call.op === 'open' && call.flags !== undefined && call.flags >= 0 && (call.flags & constants.O_CREAT) !== 0;
}
