import { describeConformance } from '../../src/conformance/index.js';
import { memorySubject } from './memory-subject.js';

describeConformance('memory', () => memorySubject());
