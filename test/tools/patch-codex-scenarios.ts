// Scenario fixtures of OpenAI Codex's apply_patch, copied as data from
// github.com/openai/codex, codex-rs/apply-patch/tests/fixtures/scenarios/ (commit 71163530a46d,
// 019 at 03540782c75c). Each is an input tree, a patch and the expected tree. Contents the
// fixtures hold but that no expectation depends on (a file that is only deleted or kept) are
// written here as `KEPT`.
//
// `ours` is set where dsh-fs deliberately differs (see docs/tools.md, "apply_patch"):
// - a failure after partial success changes nothing (Codex keeps the earlier changes);
// - an update keeps a file's missing final line break (Codex adds one).

export interface CodexScenario {
  readonly name: string;
  readonly input: Readonly<Record<string, string>>;
  readonly patch: string;
  /** The tree after the patch; the input tree when the patch must fail. */
  readonly expected: Readonly<Record<string, string>>;
  readonly fails: boolean;
  /** dsh-fs's expected tree where it differs from Codex's, with why. */
  readonly ours?: { readonly expected: Readonly<Record<string, string>>; readonly why: string };
}

const KEPT = 'kept\n';
const P = (...lines: string[]) => `*** Begin Patch\n${lines.join('\n')}\n*** End Patch\n`;

export const CODEX_SCENARIOS: readonly CodexScenario[] = [
  { name: '001_add_file', input: {}, patch: P('*** Add File: bar.md', '+This is a new file'), expected: { 'bar.md': 'This is a new file\n' }, fails: false },
  {
    name: '002_multiple_operations',
    input: { 'delete.txt': KEPT, 'modify.txt': 'line1\nline2\n' },
    patch: P('*** Add File: nested/new.txt', '+created', '*** Delete File: delete.txt', '*** Update File: modify.txt', '@@', '-line2', '+changed'),
    expected: { 'modify.txt': 'line1\nchanged\n', 'nested/new.txt': 'created\n' },
    fails: false,
  },
  {
    name: '003_multiple_chunks',
    input: { 'multi.txt': 'line1\nline2\nline3\nline4\n' },
    patch: P('*** Update File: multi.txt', '@@', '-line2', '+changed2', '@@', '-line4', '+changed4'),
    expected: { 'multi.txt': 'line1\nchanged2\nline3\nchanged4\n' },
    fails: false,
  },
  {
    name: '004_move_to_new_directory',
    input: { 'old/name.txt': 'old content\n', 'old/other.txt': KEPT },
    patch: P('*** Update File: old/name.txt', '*** Move to: renamed/dir/name.txt', '@@', '-old content', '+new content'),
    expected: { 'old/other.txt': KEPT, 'renamed/dir/name.txt': 'new content\n' },
    fails: false,
  },
  { name: '005_rejects_empty_patch', input: { 'foo.txt': KEPT }, patch: P(), expected: { 'foo.txt': KEPT }, fails: true },
  {
    name: '006_rejects_missing_context',
    input: { 'modify.txt': 'line1\nline2\n' },
    patch: P('*** Update File: modify.txt', '@@', '-missing', '+changed'),
    expected: { 'modify.txt': 'line1\nline2\n' },
    fails: true,
  },
  { name: '007_rejects_missing_file_delete', input: { 'foo.txt': KEPT }, patch: P('*** Delete File: missing.txt'), expected: { 'foo.txt': KEPT }, fails: true },
  { name: '008_rejects_empty_update_hunk', input: { 'foo.txt': KEPT }, patch: P('*** Update File: foo.txt'), expected: { 'foo.txt': KEPT }, fails: true },
  {
    name: '009_requires_existing_file_for_update',
    input: { 'foo.txt': KEPT },
    patch: P('*** Update File: missing.txt', '@@', '-old', '+new'),
    expected: { 'foo.txt': KEPT },
    fails: true,
  },
  {
    name: '010_move_overwrites_existing_destination',
    input: { 'old/name.txt': 'from\n', 'old/other.txt': KEPT, 'renamed/dir/name.txt': 'existing\n' },
    patch: P('*** Update File: old/name.txt', '*** Move to: renamed/dir/name.txt', '@@', '-from', '+new'),
    expected: { 'old/other.txt': KEPT, 'renamed/dir/name.txt': 'new\n' },
    fails: false,
  },
  {
    name: '011_add_overwrites_existing_file',
    input: { 'duplicate.txt': 'old content\n' },
    patch: P('*** Add File: duplicate.txt', '+new content'),
    expected: { 'duplicate.txt': 'new content\n' },
    fails: false,
  },
  { name: '012_delete_directory_fails', input: { 'dir/foo.txt': KEPT }, patch: P('*** Delete File: dir'), expected: { 'dir/foo.txt': KEPT }, fails: true },
  { name: '013_rejects_invalid_hunk_header', input: { 'foo.txt': KEPT }, patch: P('*** Frobnicate File: foo'), expected: { 'foo.txt': KEPT }, fails: true },
  {
    name: '014_update_file_appends_trailing_newline',
    input: { 'no_newline.txt': 'no newline at end' },
    patch: P('*** Update File: no_newline.txt', '@@', '-no newline at end', '+first line', '+second line'),
    expected: { 'no_newline.txt': 'first line\nsecond line\n' },
    fails: false,
    ours: { expected: { 'no_newline.txt': 'first line\nsecond line' }, why: 'a file without a final line break keeps lacking one' },
  },
  {
    name: '015_failure_after_partial_success_leaves_changes',
    input: {},
    patch: P('*** Add File: created.txt', '+hello', '*** Update File: missing.txt', '@@', '-old', '+new'),
    expected: { 'created.txt': 'hello\n' },
    fails: true,
    ours: { expected: {}, why: 'a patch is all or nothing: the failed update leaves created.txt uncreated' },
  },
  {
    name: '016_pure_addition_update_chunk',
    input: { 'input.txt': 'line1\nline2\n' },
    patch: P('*** Update File: input.txt', '@@', '+added line 1', '+added line 2'),
    expected: { 'input.txt': 'line1\nline2\nadded line 1\nadded line 2\n' },
    fails: false,
  },
  {
    name: '017_whitespace_padded_hunk_header',
    input: { 'foo.txt': 'old\n' },
    patch: P('  *** Update File: foo.txt', '@@', '-old', '+new'),
    expected: { 'foo.txt': 'new\n' },
    fails: false,
  },
  {
    name: '018_whitespace_padded_patch_markers',
    input: { 'file.txt': 'one\n' },
    patch: ' *** Begin Patch\n*** Update File: file.txt\n@@\n-one\n+two\n*** End Patch \n',
    expected: { 'file.txt': 'two\n' },
    fails: false,
  },
  {
    name: '019_unicode_simple',
    input: { 'foo.txt': 'line1\nnaïve café\nline3\n' },
    patch: '*** Begin Patch\n*** Update File: foo.txt\n@@\n line1\n-naïve café\n+naïve café ✅\n*** End Patch \n',
    expected: { 'foo.txt': 'line1\nnaïve café ✅\nline3\n' },
    fails: false,
  },
  {
    name: '020_delete_file_success',
    input: { 'keep.txt': KEPT, 'obsolete.txt': 'obsolete\n' },
    patch: P('*** Delete File: obsolete.txt'),
    expected: { 'keep.txt': KEPT },
    fails: false,
  },
  {
    name: '020_whitespace_padded_patch_marker_lines',
    input: { 'file.txt': 'one\n' },
    patch: '*** Begin Patch \n*** Update File: file.txt\n@@\n-one\n+two\n *** End Patch\n',
    expected: { 'file.txt': 'two\n' },
    fails: false,
  },
  {
    name: '021_update_file_deletion_only',
    input: { 'lines.txt': 'line1\nline2\nline3\n' },
    patch: P('*** Update File: lines.txt', '@@', ' line1', '-line2', ' line3'),
    expected: { 'lines.txt': 'line1\nline3\n' },
    fails: false,
  },
  {
    name: '022_update_file_end_of_file_marker',
    input: { 'tail.txt': 'first\nsecond\n' },
    patch: P('*** Update File: tail.txt', '@@', ' first', '-second', '+second updated', '*** End of File'),
    expected: { 'tail.txt': 'first\nsecond updated\n' },
    fails: false,
  },
];
