import { describe, expect, it } from 'vitest';
import { importPeer, isMissingPackage, missingPeer, requirePeer, type Peer } from '../src/peers.js';

describe('optional peers', () => {
  it('a missing peer is an FsError naming the package, who needs it and the install command', async () => {
    expect(missingPeer('pg', 'the caller')).toMatchObject({
      code: 'FS_UNSUPPORTED',
      message: 'the caller needs the package pg, which is not installed; install it with: npm install pg@"^8.23.1"',
    });
    // A package that is not there stands in for a peer that is not installed.
    const absent = 'dsh-fs-absent-peer' as Peer;
    expect(() => requirePeer(absent, absent, 'dsh-fs/x')).toThrow(expect.objectContaining({ code: 'FS_UNSUPPORTED', message: expect.stringMatching(/^dsh-fs\/x needs the package dsh-fs-absent-peer, /) }));
    await expect(importPeer(absent, `${absent}/sub.js`, 'dsh-fs/y')).rejects.toMatchObject({ code: 'FS_UNSUPPORTED', message: expect.stringMatching(/^dsh-fs\/y needs the package dsh-fs-absent-peer, /) });
  });

  it('an installed peer loads; a failure that is not its absence passes through unchanged', async () => {
    expect(typeof requirePeer<{ Pool: unknown }>('pg', 'pg', 'x').Pool).toBe('function');
    expect((await importPeer<{ default: unknown }>('fast-check', 'fast-check', 'x')).default).toBeDefined();
    const other = Object.assign(new Error("Cannot find module 'left-pad' imported from pg"), { code: 'ERR_MODULE_NOT_FOUND' });
    expect(isMissingPackage(other, 'pg')).toBe(false);
    expect(isMissingPackage(other, 'left-pad')).toBe(true);
  });
});
