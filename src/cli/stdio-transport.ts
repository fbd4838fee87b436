import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { UsageError, optionalString, type Parsed } from './args.js';

/**
 * The largest MCP message `serve` accepts by default (`--max-request-bytes`). The SDK's own stdio
 * transport stops reading for good past 10 MiB, which left the server waiting on a stdin it no
 * longer read.
 */
export const DEFAULT_MAX_REQUEST_BYTES = 64 * 1024 * 1024;

/** `--max-request-bytes N` (a positive whole number of bytes), or the default. */
export function maxRequestBytes(parsed: Parsed): number {
  const given = optionalString(parsed, 'max-request-bytes');
  if (given === undefined) return DEFAULT_MAX_REQUEST_BYTES;
  const n = /^[0-9]+$/.test(given) ? Number(given) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new UsageError(`--max-request-bytes must be a positive whole number of bytes, not "${given}"`, 'serve');
  }
  return n;
}

export interface BoundedStdioOptions {
  readonly stdin?: NodeJS.ReadableStream;
  readonly stdout?: NodeJS.WritableStream;
  /** Messages longer than this (in bytes, without the line break) are refused, not read. */
  readonly maxRequestBytes?: number;
  readonly log?: (line: string) => void;
}

/** Why the transport stopped; `failed` when the server should exit non-zero. */
export interface TransportEnd {
  readonly reason: string;
  readonly failed: boolean;
}

/**
 * MCP over stdio, one JSON-RPC message per line, like the SDK's StdioServerTransport, except that
 * a message over the limit is skipped to its line break (never buffered) and answered with an
 * error for its id, and the server goes on reading. A tool call gets a tool error result carrying
 * `FS_TOO_LARGE`, so the model sees why; other requests a JSON-RPC "invalid request" error.
 */
export class BoundedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Resolves once, when stdin ends or fails, or stdout fails. */
  readonly ended: Promise<TransportEnd>;

  private readonly stdin: NodeJS.ReadableStream;
  private readonly stdout: NodeJS.WritableStream;
  private readonly max: number;
  private readonly log: (line: string) => void;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private skipping: { bytes: number; scanner: TopLevelScanner } | undefined;
  private finish!: (end: TransportEnd) => void;
  private done = false;

  constructor(options: BoundedStdioOptions = {}) {
    this.stdin = options.stdin ?? process.stdin;
    this.stdout = options.stdout ?? process.stdout;
    this.max = options.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES;
    this.log = options.log ?? (() => {});
    this.ended = new Promise((resolve) => (this.finish = resolve));
  }

  async start(): Promise<void> {
    this.stdin.on('data', this.onData);
    this.stdin.once('end', this.onEnd);
    this.stdin.once('close', this.onEnd);
    this.stdin.on('error', this.onStdinError);
    this.stdout.on('error', this.onStdoutError);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    await this.write(`${JSON.stringify(message)}\n`);
  }

  async close(): Promise<void> {
    this.stdin.off('data', this.onData);
    this.stdin.off('end', this.onEnd);
    this.stdin.off('close', this.onEnd);
    this.stdin.off('error', this.onStdinError);
    this.pending = [];
    this.skipping = undefined;
    this.end({ reason: 'the server closed the transport', failed: false });
    this.onclose?.();
  }

  /** Only reports: the server decides when to close, after the calls in flight have answered. */
  private end(end: TransportEnd): void {
    if (this.done) return;
    this.done = true;
    this.finish(end);
  }

  private readonly onEnd = () => this.end({ reason: 'the client closed stdin', failed: false });
  private readonly onStdinError = (err: Error) => this.end({ reason: `cannot read stdin: ${err.message}`, failed: true });
  private readonly onStdoutError = (err: Error) => this.end({ reason: `cannot write to stdout: ${err.message}`, failed: true });

  private write(text: string): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.write(text)) resolve();
      else this.stdout.once('drain', resolve);
    });
  }

  private readonly onData = (data: Buffer | string) => {
    const chunk = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(0x0a, start);
      const piece = chunk.subarray(start, nl === -1 ? chunk.length : nl);
      this.take(piece);
      if (nl === -1) break;
      this.lineEnd();
      start = nl + 1;
    }
  };

  /** A part of the current line: kept while under the limit, else only scanned for its id. */
  private take(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.skipping === undefined && this.pendingBytes + piece.length > this.max) {
      this.skipping = { bytes: 0, scanner: new TopLevelScanner() };
      for (const kept of this.pending) this.skip(kept);
      this.pending = [];
      this.pendingBytes = 0;
    }
    if (this.skipping !== undefined) this.skip(piece);
    else {
      // A copy: the stream may reuse its chunk's memory once this handler returns.
      this.pending.push(Buffer.from(piece));
      this.pendingBytes += piece.length;
    }
  }

  private skip(piece: Buffer): void {
    this.skipping!.bytes += piece.length;
    this.skipping!.scanner.feed(piece);
  }

  private lineEnd(): void {
    const skipped = this.skipping;
    if (skipped !== undefined) {
      this.skipping = undefined;
      this.refuse(skipped.bytes, skipped.scanner);
      return;
    }
    const line = Buffer.concat(this.pending, this.pendingBytes).toString('utf8').replace(/\r$/, '');
    this.pending = [];
    this.pendingBytes = 0;
    if (line.trim() === '') return;
    let message: JSONRPCMessage;
    try {
      message = JSONRPCMessageSchema.parse(JSON.parse(line));
    } catch (err) {
      this.onerror?.(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    this.onmessage?.(message);
  }

  private refuse(bytes: number, scanner: TopLevelScanner): void {
    const { id, method } = scanner.result();
    this.log(
      `refused a message of ${bytes} bytes${method === undefined ? '' : ` (${method})`}: over the limit of ${this.max} bytes (--max-request-bytes)`,
    );
    if (id === undefined) return; // a notification, or no id could be found: nothing to answer
    const text =
      `the request is ${bytes} bytes, over this server's limit of ${this.max} bytes (dsh-fs serve --max-request-bytes); ` +
      'send less at once, e.g. write a large file in parts: write the first part, then add the rest with edit';
    const reply: JSONRPCMessage =
      method === 'tools/call'
        ? {
            jsonrpc: '2.0',
            id,
            result: {
              isError: true,
              content: [{ type: 'text', text: `Error: ${text}` }],
              _meta: { 'dsh-fs/error': { name: 'FsError', code: 'FS_TOO_LARGE' } },
            },
          }
        : { jsonrpc: '2.0', id, error: { code: -32600, message: `Invalid request: ${text}`, data: { code: 'FS_TOO_LARGE', bytes, limit: this.max } } };
    void this.write(`${JSON.stringify(reply)}\n`);
  }
}

/**
 * Finds the top-level `id` and `method` of a JSON object streamed through it, keeping nothing
 * else: nesting and strings are tracked byte by byte (every structural character is ASCII, so
 * multi-byte UTF-8 needs no decoding).
 */
export class TopLevelScanner {
  private depth = 0;
  private inString = false;
  private escaped = false;
  private expectKey = false;
  private key: number[] | undefined;
  private lastKey = '';
  private value: number[] | undefined;
  private valueFor = '';
  private readonly found = new Map<string, string>();

  feed(bytes: Uint8Array): void {
    for (let i = 0; i < bytes.length; i++) this.byte(bytes[i]!);
  }

  result(): { id: string | number | undefined; method: string | undefined } {
    const parse = (raw: string | undefined): unknown => {
      if (raw === undefined) return undefined;
      try {
        return JSON.parse(raw);
      } catch {
        return undefined;
      }
    };
    const id = parse(this.found.get('id'));
    const method = parse(this.found.get('method'));
    return {
      id: typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : undefined,
      method: typeof method === 'string' ? method : undefined,
    };
  }

  private byte(b: number): void {
    if (this.value !== undefined && this.depth === 1 && (this.inString || (b !== 0x2c && b !== 0x7d))) {
      if (this.value.length < 1024) this.value.push(b);
      else this.value = undefined; // not an id or method anyone sends
    }
    if (this.inString) {
      if (this.escaped) this.escaped = false;
      else if (b === 0x5c) this.escaped = true;
      else if (b === 0x22) {
        this.inString = false;
        if (this.key !== undefined) {
          this.lastKey = Buffer.from(this.key).toString('utf8');
          this.key = undefined;
        }
        return;
      }
      if (this.key !== undefined && this.key.length < 64) this.key.push(b);
      return;
    }
    switch (b) {
      case 0x22: // "
        this.inString = true;
        if (this.depth === 1 && this.expectKey) {
          this.key = [];
          this.expectKey = false;
        }
        return;
      case 0x7b: // {
      case 0x5b: // [
        this.depth++;
        if (this.depth === 1) this.expectKey = b === 0x7b;
        else if (this.depth === 2) this.value = undefined; // an object or array: not a scalar id
        return;
      case 0x7d: // }
      case 0x5d: // ]
        if (this.depth === 1) this.endValue();
        this.depth = Math.max(0, this.depth - 1);
        return;
      case 0x3a: // :
        if (this.depth === 1 && (this.lastKey === 'id' || this.lastKey === 'method')) {
          this.value = [];
          this.valueFor = this.lastKey;
        }
        return;
      case 0x2c: // ,
        if (this.depth === 1) {
          this.endValue();
          this.expectKey = true;
        }
        return;
    }
  }

  private endValue(): void {
    if (this.value !== undefined) this.found.set(this.valueFor, Buffer.from(this.value).toString('utf8').trim());
    this.value = undefined;
  }
}
