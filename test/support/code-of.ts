import { isFsError, type FsErrorCode } from '../../src/seam/index.js';

/** The FsError code a call settles with, or 'ok'; anything else that it throws is a test failure. */
export async function codeOf(p: Promise<unknown>): Promise<FsErrorCode | 'ok'> {
  try {
    await p;
    return 'ok';
  } catch (err) {
    if (isFsError(err)) return err.code;
    throw err;
  }
}
