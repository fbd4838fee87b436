import type { HarnessPlugin } from '../harness/index.js';
import { feedbackNote, type FeedbackStore } from './feedback.js';

/**
 * A harness plugin: the reasons of rejected hunks are handed to the agent once, as a note on its
 * next tool result (whatever the tool, success or failure). Text: see `feedbackNote`.
 */
export function reviewNotes(feedback: FeedbackStore): HarnessPlugin {
  return {
    name: 'review-notes',
    apply: (ctx) => {
      ctx.tools.addNote(() => feedbackNote(feedback.take()));
    },
  };
}
