/**
 * The change feed of a PostgreSQL workspace: LISTEN on its channel (the schema's trigger NOTIFYs
 * every committed change, see schema.ts), on one connection per provider shared by its watchers.
 * A `pg` Pool lends a dedicated connection; a `pg` Client and PGlite listen on their own.
 */
import { createHash } from 'node:crypto';
import { FsError, FsVersion, createChangeHub, type FsChangeKind, type FsChangeListener, type FsOpOptions, type FsProviderChange } from '../../seam/index.js';
import { pgError, type PgQueryable } from './client.js';
import type { PgContext } from './provider-context.js';

/** How long to wait before listening again after the connection was lost. */
const RECONNECT_MS = 500;
const KINDS = new Set<FsChangeKind>(['write', 'remove', 'mkdir', 'rmdir', 'rename', 'link', 'mode', 'overflow']);
const OVERFLOW: FsProviderChange = { kind: 'overflow', path: '/' };

/** As the schema's trigger names it: 'dsh_fs_' and the first 24 hex digits of the workspace's md5. */
export function feedChannel(workspace: string): string {
  return `dsh_fs_${createHash('md5').update(workspace).digest('hex').slice(0, 24)}`;
}

interface Notification {
  readonly channel?: string;
  readonly payload?: string;
}

interface Listening {
  /** Stops listening and gives the connection back. */
  stop(): Promise<void>;
}

interface PoolLike extends PgQueryable {
  connect(): Promise<PgQueryable & { release(destroy?: boolean | Error): void } & Emitter>;
  readonly totalCount: number;
}

interface Emitter {
  on(event: string, fn: (arg: any) => void): unknown;
  removeListener(event: string, fn: (arg: any) => void): unknown;
}

interface PGliteLike extends PgQueryable {
  listen(channel: string, fn: (payload: string) => void): Promise<() => Promise<void>>;
}

/** The provider's `watch`: resolves once LISTEN is live. */
export function createPostgresWatch(ctx: PgContext): (listener: FsChangeListener, options: FsOpOptions) => Promise<() => void> {
  const hub = createChangeHub();
  const channel = feedChannel(ctx.ws);
  let listening: Promise<Listening> | undefined;
  let watchers = 0;

  const deliver = (payload: string | undefined) => {
    const change = parsePayload(payload);
    if (change !== undefined) hub.emit(change);
  };

  const start = (): Promise<Listening> =>
    (listening ??= listen(ctx, channel, deliver, () => {
      // The connection was lost: what was sent meanwhile is lost too. Listen again while watched.
      listening = undefined;
      hub.emit(OVERFLOW);
      const again = () => {
        if (watchers === 0) return;
        start().catch(() => setTimeout(again, RECONNECT_MS).unref?.());
      };
      setTimeout(again, RECONNECT_MS).unref?.();
    }).catch((err: unknown) => {
      listening = undefined;
      throw err;
    }));

  return async (listener, { signal }) => {
    await ctx.ready(signal);
    watchers++;
    let unsubscribe: (() => void) | undefined;
    try {
      await start();
      unsubscribe = await hub.watch(listener);
    } catch (err) {
      watchers--;
      throw pgError(err, `cannot watch the workspace "${ctx.ws}"`);
    }
    let stopped = false;
    return () => {
      if (stopped) return;
      stopped = true;
      unsubscribe!();
      if (--watchers > 0) return;
      const current = listening;
      listening = undefined;
      void current?.then((l) => l.stop()).catch(() => {});
    };
  };
}

/** LISTEN on `channel` with whatever connection the client gives; `lost` when it ends by itself. */
async function listen(ctx: PgContext, channel: string, deliver: (payload: string | undefined) => void, lost: () => void): Promise<Listening> {
  const client = ctx.db.client;
  if (typeof (client as PGliteLike).listen === 'function') {
    const unlisten = await (client as PGliteLike).listen(channel, (payload) => deliver(payload));
    return { stop: () => unlisten() };
  }
  const isPool = typeof (client as PoolLike).connect === 'function' && 'totalCount' in client;
  if (isPool) {
    if ((client as { options?: { max?: unknown } }).options?.max === 1) {
      // Listening holds a connection for as long as anyone watches: the filesystem would have none.
      throw new FsError('FS_UNSUPPORTED', `cannot watch the workspace "${ctx.ws}": the pg Pool has one connection, and listening needs one of its own (raise max)`);
    }
    const conn = await (client as PoolLike).connect();
    let ended = false;
    const onNotify = (msg: Notification) => {
      if (msg.channel === channel) deliver(msg.payload);
    };
    const onError = () => {
      if (ended) return;
      ended = true;
      conn.removeListener('notification', onNotify);
      conn.release(true);
      lost();
    };
    conn.on('notification', onNotify);
    conn.on('error', onError);
    try {
      await conn.query(`LISTEN ${channel}`);
    } catch (err) {
      ended = true;
      conn.removeListener('notification', onNotify);
      conn.removeListener('error', onError);
      conn.release(true);
      throw err;
    }
    return {
      async stop() {
        if (ended) return;
        ended = true;
        conn.removeListener('notification', onNotify);
        const ok = await conn.query(`UNLISTEN ${channel}`).then(() => true, () => false);
        conn.removeListener('error', onError);
        conn.release(ok ? undefined : true);
      },
    };
  }
  if (typeof (client as Partial<Emitter>).on === 'function') {
    // One `pg` Client: it listens itself, between the provider's statements.
    const emitter = client as PgQueryable & Emitter;
    const { live, last } = route(emitter, channel, deliver, () =>
      ctx.db.session(`cannot watch the workspace "${ctx.ws}"`, undefined, (q) => q(`LISTEN ${channel}`)).then(() => undefined),
    );
    try {
      await live;
    } catch (err) {
      last();
      throw err;
    }
    return {
      async stop() {
        if (last()) await ctx.db.session('UNLISTEN', undefined, (q) => q(`UNLISTEN ${channel}`)).catch(() => {});
      },
    };
  }
  throw new FsError('FS_UNSUPPORTED', `cannot watch the workspace "${ctx.ws}": the client can run statements but not LISTEN (give a pg Pool, a pg Client or PGlite)`);
}

/** A trigger's payload as a change; undefined for anything malformed. */
export function parsePayload(payload: string | undefined): FsProviderChange | undefined {
  let raw: { k?: unknown; p?: unknown; f?: unknown; v?: unknown };
  try {
    raw = JSON.parse(payload ?? '') as typeof raw;
  } catch {
    return undefined;
  }
  if (typeof raw !== 'object' || raw === null) return undefined;
  const { k, p, f, v } = raw;
  if (typeof k !== 'string' || !KINDS.has(k as FsChangeKind) || typeof p !== 'string') return undefined;
  if (k === 'rename' && typeof f !== 'string') return undefined;
  return {
    kind: k as FsChangeKind,
    path: p,
    ...(k === 'rename' ? { from: f as string } : {}),
    ...(typeof v === 'string' && v !== '' ? { version: FsVersion(v) } : {}),
  };
}

type Deliver = (payload: string | undefined) => void;

interface Channel {
  readonly fns: Set<Deliver>;
  /** Settles once LISTEN is live (the first route's). */
  readonly live: Promise<void>;
}

/**
 * The filesystems listening through each pg Client, by channel: one `notification` listener per
 * Client however many workspaces share it (Node warns past ten), and a channel listened to while
 * any filesystem of that workspace watches (one stopping must not UNLISTEN for another).
 */
const routes = new WeakMap<Emitter, { readonly byChannel: Map<string, Channel>; readonly onNotify: (msg: Notification) => void }>();

/**
 * Routes `channel`'s notifications on `emitter` to `deliver`, with `listen` run by the first route
 * of the channel (`live` settles with it); `last()` unroutes, true when UNLISTEN is due.
 */
function route(emitter: Emitter, channel: string, deliver: Deliver, listen: () => Promise<void>): { live: Promise<void>; last: () => boolean } {
  let r = routes.get(emitter);
  if (r === undefined) {
    const byChannel = new Map<string, Channel>();
    const onNotify = (msg: Notification) => {
      if (msg.channel === undefined) return;
      for (const fn of byChannel.get(msg.channel)?.fns ?? []) fn(msg.payload);
    };
    r = { byChannel, onNotify };
    routes.set(emitter, r);
    emitter.on('notification', onNotify);
  }
  const { byChannel, onNotify } = r;
  let ch = byChannel.get(channel);
  if (ch === undefined) byChannel.set(channel, (ch = { fns: new Set(), live: listen() }));
  const { fns } = ch;
  // A wrapper of its own, so the same function routed twice is two routes.
  const fn: Deliver = (payload) => deliver(payload);
  fns.add(fn);
  let done = false;
  return {
    live: ch.live,
    last: () => {
      if (done) return false;
      done = true;
      fns.delete(fn);
      if (fns.size > 0) return false;
      byChannel.delete(channel);
      if (byChannel.size === 0) {
        emitter.removeListener('notification', onNotify);
        routes.delete(emitter);
      }
      return true;
    },
  };
}
