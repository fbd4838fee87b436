import type { Rule } from '../harness.js';
import { batchRules } from './batch.js';
import { dirRules, layerRules } from './dirs.js';
import { editRules } from './edit.js';
import { guardRules } from './guards.js';
import { modelRules } from './model.js';
import { modeRules } from './modes.js';
import { linkRules } from './links.js';
import { pathRules } from './paths.js';
import { quotaRules } from './quota.js';
import { createRaceRules, renameRules } from './races.js';
import { rmdirRules } from './rmdir.js';
import { rootRules } from './root.js';
import { searchRules } from './search.js';
import { searchReadRules } from './search-reads.js';
import { textRules } from './text.js';
import { unversionedRules } from './unversioned.js';
import { streamRules } from './streams.js';
import { versionRules } from './versions.js';
import { walkRules } from './walk.js';

/** Every rule, in the order docs/conformance.md lists them, then the model-based check. */
export const ALL_RULES: readonly Rule[] = [
  ...versionRules,
  ...unversionedRules,
  ...streamRules,
  ...guardRules,
  ...createRaceRules,
  ...editRules,
  ...textRules,
  ...pathRules,
  ...dirRules,
  ...renameRules,
  ...rootRules,
  ...rmdirRules,
  ...walkRules,
  ...modeRules,
  ...linkRules,
  ...batchRules,
  ...quotaRules,
  ...layerRules,
  ...searchRules,
  ...searchReadRules,
  ...modelRules,
];
