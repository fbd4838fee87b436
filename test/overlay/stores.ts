import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseJournal } from '../../src/backends/overlay/state.js';
import type { UpperStore } from '../../src/backends/overlay/store.js';
import { FsError } from '../../src/seam/index.js';

interface DocEntry {
  path: string;
  base: string | null;
  blob: string | null;
  mtimeMs?: number;
  origin?: { path: string; version?: string };
  data?: string;
}

/** What a state directory holds once its journal is replayed onto its document (as a document). */
export async function effectiveDoc(stateDir: string): Promise<{ version: number; generation?: number; entries: DocEntry[]; dirs: string[]; opaque: string[] }> {
  const doc = JSON.parse(await readFile(join(stateDir, 'overlay.json'), 'utf8'));
  const entries = new Map<string, DocEntry>((doc.entries as DocEntry[]).map((e) => [e.path, e]));
  const dirs = new Set<string>(doc.dirs);
  const opaque = new Set<string>(doc.opaque ?? []);
  const raw = await readFile(join(stateDir, 'overlay.journal')).catch(() => undefined);
  const journal = raw ? parseJournal(raw, stateDir) : undefined;
  if (journal && journal.header?.generation === doc.generation) {
    for (const r of journal.records) {
      for (const e of r.entries ?? []) if ('drop' in e) entries.delete(e.path); else entries.set(e.path, e as DocEntry);
      for (const d of r.addDirs ?? []) dirs.add(d);
      for (const d of r.dropDirs ?? []) dirs.delete(d);
      for (const d of r.addOpaque ?? []) opaque.add(d);
      for (const d of r.dropOpaque ?? []) opaque.delete(d);
    }
  }
  const sort = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return {
    version: doc.version,
    generation: doc.generation,
    entries: [...entries.values()].sort((a, b) => sort(a.path, b.path)),
    dirs: [...dirs].sort(sort),
    opaque: [...opaque].sort(sort),
  };
}

/** What a store holds on "disk": survives a crash of the process that wrote it. */
export interface MemoryDisk {
  state?: Uint8Array;
  journal?: Uint8Array;
  blobs: Map<string, Uint8Array>;
}

export function memoryDisk(): MemoryDisk {
  return { blobs: new Map() };
}

/**
 * A store in memory with a crash switch: the `crashAt`-th call (1-based; counting every call)
 * fails, and so does every later one (the process is dead). A crashing append first writes a
 * prefix of its bytes (`tear` of them, 0..1), as a crash mid-write leaves on disk; a crashing
 * atomic write lands or not (`tear` ≥ 0.5: it landed, then the process died).
 */
export function crashingStore(disk: MemoryDisk, crashAt = Infinity, tear = 0): UpperStore & { calls: number; crashed: boolean } {
  const dead = () => new FsError('FS_IO_ERROR', 'the process crashed');
  const store = {
    where: 'memory',
    calls: 0,
    crashed: false,
    step(): boolean {
      if (store.crashed) throw dead();
      store.calls++;
      if (store.calls >= crashAt) store.crashed = true;
      return store.crashed;
    },
    async readState() {
      store.step();
      if (store.crashed) throw dead();
      return disk.state && new Uint8Array(disk.state);
    },
    async writeState(bytes: Uint8Array) {
      if (store.step()) {
        if (tear >= 0.5) disk.state = new Uint8Array(bytes);
        throw dead();
      }
      disk.state = new Uint8Array(bytes);
    },
    async readBlob(id: string) {
      store.step();
      if (store.crashed) throw dead();
      const b = disk.blobs.get(id);
      return b && new Uint8Array(b);
    },
    async writeBlob(id: string, bytes: Uint8Array) {
      if (store.step()) {
        if (tear >= 0.5) disk.blobs.set(id, new Uint8Array(bytes));
        throw dead();
      }
      disk.blobs.set(id, new Uint8Array(bytes));
    },
    async deleteBlob(id: string) {
      if (store.step()) throw dead();
      disk.blobs.delete(id);
    },
    async listBlobs() {
      if (store.step()) throw dead();
      return [...disk.blobs.keys()];
    },
    async readJournal() {
      if (store.step()) throw dead();
      return disk.journal && new Uint8Array(disk.journal);
    },
    async writeJournal(bytes: Uint8Array) {
      if (store.step()) {
        if (tear >= 0.5) disk.journal = new Uint8Array(bytes);
        throw dead();
      }
      disk.journal = new Uint8Array(bytes);
    },
    async appendJournal(offset: number, bytes: Uint8Array) {
      const crashing = store.step();
      const n = crashing ? Math.floor(bytes.byteLength * tear) : bytes.byteLength;
      const now = disk.journal ?? new Uint8Array(0);
      // A torn append leaves the old tail past what it wrote (it truncates last).
      const keep = crashing ? Math.max(now.byteLength, offset + n) : offset + n;
      const next = new Uint8Array(keep);
      next.set(now.subarray(0, Math.min(now.byteLength, keep)));
      next.set(bytes.subarray(0, n), offset);
      disk.journal = next;
      if (crashing) throw dead();
    },
  };
  return store;
}
