import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import { createPostgresFeedback } from '../../src/backends/postgres/index.js';
import { createSqliteFeedback } from '../../src/backends/sqlite/index.js';
import { createHarness } from '../../src/harness/index.js';
import { openReview, reviewNotes, type FeedbackStore } from '../../src/review/index.js';
import type { ReviewFeedback } from '../../src/review/types.js';
import { fsTools } from '../../src/tools/index.js';
import { removeTemps, tempDir } from '../cli/helpers.js';
import { newWorkspace, sharedPglite } from '../postgres/helpers.js';

afterAll(removeTemps);

const item = (n: number, reason = `reason ${n}`): ReviewFeedback => ({ path: `f${n}.txt`, lines: String(n), reason, id: `id${n}` });

/** Two stores of one sandbox stand for two processes: what one adds, the other takes, once. */
function sharedStoreCases(name: string, store: (sandbox: string) => Promise<FeedbackStore>) {
  const open = async (sandbox = newWorkspace('s')): Promise<[FeedbackStore, FeedbackStore]> => [await store(sandbox), await store(sandbox)];
  describe(name, () => {
    it('what one store adds the other has pending, takes in order once, and then has none', async () => {
      const [reviewer, agent] = await open();
      await reviewer.add([item(1)]);
      await reviewer.add([item(2), item(3, 'line one\nline two')]);
      expect(await agent.pending()).toEqual([item(1), item(2), item(3, 'line one\nline two')]);
      expect(await agent.take()).toEqual([item(1), item(2), item(3, 'line one\nline two')]);
      expect(await agent.take()).toEqual([]);
      expect(await reviewer.pending()).toEqual([]);
    });

    it('sandboxes do not hear each other', async () => {
      const [a] = await open();
      const [b] = await open();
      await a.add([item(1)]);
      expect(await b.take()).toEqual([]);
      expect(await a.take()).toEqual([item(1)]);
    });

    it("a harness's next tool result carries a reason added to the other store, once", async () => {
      const [reviewerStore, agentStore] = await open();
      const lower = createMemoryFs();
      await lower.writeText(await lower.resolve('/a.txt'), 'one\ntwo\n');
      const sandbox = await createOverlayFs({ lower });
      await sandbox.writeText(await sandbox.resolve('/a.txt'), 'one\nTWO\n');
      const review = openReview(sandbox, { feedback: reviewerStore });
      const [a] = await review.files();
      await review.reject([a!.id], 'keep two');
      const harness = createHarness({ fs: sandbox, plugins: [fsTools(), reviewNotes(agentStore)] });
      const first = await harness.tools.execute('read', { file_path: '/a.txt' }, { owner: 'agent' });
      expect(first.text).toContain('Note: a reviewer rejected your change to a.txt and reverted it in the sandbox: keep two');
      const second = await harness.tools.execute('read', { file_path: '/a.txt' }, { owner: 'agent' });
      expect(second.text).not.toContain('reviewer');
      expect(await review.pendingFeedback()).toEqual([]);
    });
  });
}

let file: Promise<string> | undefined;
sharedStoreCases('review feedback in a SQLite file', async (sandbox) => createSqliteFeedback({ path: await (file ??= tempDir().then((d) => join(d, 'ws.db'))), sandbox }));

sharedStoreCases('review feedback in PostgreSQL (embedded)', async (sandbox) => createPostgresFeedback({ client: await sharedPglite(), sandbox }));
