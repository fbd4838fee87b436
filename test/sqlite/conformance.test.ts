import { describeConformance } from '../../src/conformance/index.js';
import { sqliteSubject } from './helpers.js';

describeConformance('sqlite', sqliteSubject);
