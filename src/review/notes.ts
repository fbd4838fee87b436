import type { HarnessPlugin } from '../harness/index.js';
import { feedbackNote, type FeedbackStore } from './feedback.js';
import type { ReviewFeedback } from './types.js';

/**
 * A harness plugin: the reasons of rejected hunks are handed to the agent once, as a note on its
 * next tool result (whatever the tool, success or failure). Text: see `feedbackNote`.
 */
export function reviewNotes(feedback: FeedbackStore): HarnessPlugin {
  // Taken after each call (a store in a database answers asynchronously) and held until a result carries them.
  let ready: ReviewFeedback[] = [];
  return {
    name: 'review-notes',
    apply: (ctx) => {
      ctx.tools.around(async (_info, next) => {
        const result = await next();
        try {
          ready.push(...(await feedback.take()));
        } catch {
          // The store could not be read: the reasons wait there for a later call.
        }
        return result;
      });
      ctx.tools.addNote(() => {
        const items = ready;
        ready = [];
        return feedbackNote(items);
      });
    },
  };
}
