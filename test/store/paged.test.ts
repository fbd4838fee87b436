import { describeConformance } from '../../src/conformance/index.js';
import { pagedStore, storeSubject } from '../conformance/store-mutants.js';

// A store that lists two children per page: the tier reads every page, so every rule holds.
describeConformance('store tier over a paged store', () => storeSubject(pagedStore(2)));
