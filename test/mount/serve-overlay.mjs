// Serves an overlay sandbox at argv[2] from the built package, until SIGTERM: over the local
// directory argv[3], or over an empty memory filesystem when argv[4] is "memory". A separate
// process, so that a client in the test process may use synchronous calls on the mount.
import { createLocalFs } from '../../dist/backends/local/index.js';
import { createMemoryFs } from '../../dist/backends/memory/index.js';
import { createOverlayFs } from '../../dist/backends/overlay/index.js';
import { mountFs } from '../../dist/mount/index.js';

const lower = process.argv[4] === 'memory' ? createMemoryFs() : createLocalFs({ root: process.argv[3] });
const sandbox = await createOverlayFs({ lower });
const mount = await mountFs(sandbox, process.argv[2], { onWarning: (w) => process.stderr.write(`${w}\n`) });
process.stdout.write('ready\n');
process.once('SIGTERM', () => {
  mount.unmount().then(
    () => process.exit(0),
    (err) => {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    },
  );
});
