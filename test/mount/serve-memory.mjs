// Serves an empty memory filesystem at argv[2] from the built package, until SIGTERM: a separate
// process, so that a client in the test process may use synchronous calls on the mount.
import { createMemoryFs } from '../../dist/backends/memory/index.js';
import { mountFs } from '../../dist/mount/index.js';

const mount = await mountFs(createMemoryFs(), process.argv[2], { onWarning: (w) => process.stderr.write(`${w}\n`) });
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
