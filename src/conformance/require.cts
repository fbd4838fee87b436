// `require('dsh-fs/conformance')` lands here: the suite loads vitest (ESM-only) when present, so
// it is an ES module with a top-level await, which require() cannot load. Say so plainly.
const error = new Error(
  "dsh-fs/conformance is ESM-only: load it with import (or `await import('dsh-fs/conformance')` from CommonJS), not require().",
) as Error & { code: string };
error.code = 'ERR_REQUIRE_ESM';
throw error;
