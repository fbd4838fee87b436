import type { Owner } from './events.js';

/**
 * A source of notes for tool results: what it returns for a call's owner is appended to that
 * call's text, success or failure (e.g. the observation policy's "a file you read has changed").
 * Called once per call, after the call; a source that throws adds nothing.
 */
export type ToolNoteSource = (owner: Owner) => string | undefined;

/** `text` with the notes of every source for `owner`, each as its own paragraph. */
export function withNotes(text: string, owner: unknown, sources: Iterable<ToolNoteSource>): string {
  const ownerOk = (typeof owner === 'string' && owner !== '') || (typeof owner === 'object' && owner !== null) || typeof owner === 'function';
  if (!ownerOk) return text;
  let out = text;
  for (const source of sources) {
    let note: string | undefined;
    try {
      note = source(owner as Owner);
    } catch {
      note = undefined;
    }
    if (typeof note === 'string' && note !== '') out = `${out}\n\n${note}`;
  }
  return out;
}
