// Help for the merge command; the option texts are help.ts's.

export function mergeHelp(state: string, postgres: string) {
  return {
    merge: `Usage: dsh-fs merge --root DIR [--state DIR] --from FORK_STATE [--markers] [--dry-run] [--json]
       dsh-fs merge --sqlite FILE [--workspace NAME] [--sandbox NAME] --from NAME [--markers] [--dry-run] [--json]

Three-way merges the fork kept in FORK_STATE (made by "dsh-fs fork --into FORK_STATE") into the
sandbox it was forked from, path by path against the sandbox as it was at the fork: a path only
one side changed takes that side; a text file both changed gets both edits when they are
separated by an unchanged line; anything else that collides (overlapping edits, a removal against
a change, a file against a directory, binary files changed on both sides) is a conflict, listed
with the base, ours (the sandbox) and theirs (the fork) lines of each region. By default nothing
changes when there is any conflict. The merge is one change of the sandbox ("dsh-fs rewind"
undoes it); a path the sandbox changed while the merge was computed is reported, not overwritten.

Options:
  --root DIR       the directory the sandbox is over (required)
${state}
  --from FORK      the fork's state directory (with --sqlite: the fork's sandbox name) (required)
  --markers        apply everything, and write each text conflict into its file between git-style
                   markers (<<<<<<< parent, ||||||| base, =======, >>>>>>> fork): "dsh-fs status"
                   shows such files as conflicted and "dsh-fs commit" refuses them until the
                   markers are gone
  --dry-run        report what would be merged, change nothing
  --json           print { "merged": [paths], "conflicts": [{ "path", "kind", "regions":
                   [{ "base", "ours", "theirs", "baseStart", "oursStart", "theirsStart" }] }] }
  -h, --help       show this help

Exit status: 0 merged (or nothing to merge), 1 conflicts (nothing changed unless --markers), 2 usage.
`,
    sync: `Usage: dsh-fs sync --root DIR [--state DIR] [--markers] [--dry-run] [--json]
       dsh-fs sync --postgres URL --workspace NAME [--sandbox NAME] [--markers] [--dry-run] [--json]
       dsh-fs sync --sqlite FILE [--workspace NAME] [--sandbox NAME] [--markers] [--dry-run] [--json]

When DIR changed under the sandbox (a pull, an edit in an editor), merges those changes into the
sandbox three ways, per file the sandbox changed: base = the file as the sandbox first read it,
ours = the sandbox's file, theirs = the file in DIR now; the same rules as "dsh-fs merge". A merged
file then counts as changed from DIR's current file, so "dsh-fs commit" conflicts only where the
edits overlapped. The sandbox keeps a file's first content for text files of at most 256 KiB;
a larger or binary file changed on both sides is a conflict. One change of the sandbox.

Options:
  --root DIR       the directory the sandbox is over (required)
${state}
${postgres}
  --markers        write each text conflict into its file between markers (<<<<<<< sandbox,
                   ||||||| base, =======, >>>>>>> folder); commit refuses such files
  --dry-run        report what would be merged, change nothing
  --json           print { "merged": [paths], "conflicts": [{ "path", "kind", "regions": [...] }] }
                   as "dsh-fs merge" does
  -h, --help       show this help

Exit status: 0 synced (or nothing to sync), 1 conflicts (nothing changed unless --markers), 2 usage.
`,
  };
}
