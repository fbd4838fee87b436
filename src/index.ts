export * from './seam/index.js';
