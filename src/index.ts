export * from './seam/index.js';
export * from './harness/index.js';
export * from './search/index.js';
