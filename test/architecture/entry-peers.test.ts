import { describe, expect, it } from 'vitest';
import { PEERS } from '../../src/peers.js';
import { loaded, packagesOf } from './import-graph.js';

describe('the main entry', () => {
  it('loads no optional peer: createSandbox and the rest work without any installed', () => {
    const files = loaded('index.ts');
    expect(files).toContain('sandbox/index.ts');
    const peers = Object.keys(PEERS);
    const offending = files.flatMap((f) => packagesOf(f).filter((p) => peers.some((peer) => p === peer || p.startsWith(`${peer}/`))).map((p) => `${f}: ${p}`));
    expect(offending).toEqual([]);
  });

  it('the check sees a static import of a peer, and not a type-only one', () => {
    expect(packagesOf('conformance/arbitraries.ts')).toContain('fast-check');
    expect(packagesOf('cli/stdio-transport.ts')).toContain('@modelcontextprotocol/sdk/types.js');
    expect(packagesOf('mcp/raw-args.ts')).toEqual([]);
  });
});
