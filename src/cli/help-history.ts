// Help for the history commands (checkpoints, rewind, log); the option texts are help.ts's.

export function historyHelp(state: string, postgres: string, paths: string) {
  return {
    checkpoints: `Usage: dsh-fs checkpoints --root DIR [--state DIR] [--json]
       dsh-fs checkpoints --postgres URL --workspace NAME [--sandbox NAME] [--json]

Lists the sandbox's checkpoints, oldest first: every change in the sandbox (a tool call, a write
through a mount, a commit, a discard, a rewind) records one. Each line: the checkpoint's id, when
it was made, the paths it changed (relative to DIR), and its owner and source when the program
that made the change gave them. The newest 1,000 are kept.

Options:
  --root DIR    the directory the sandbox is over (required)
${state}
${postgres}
  --json        print { "checkpoints": [{ "id", "time", "owner"?, "source"?, "paths" }] }
                (time in milliseconds since 1970)
  -h, --help    show this help
`,
    rewind: `Usage: dsh-fs rewind --root DIR [--state DIR] --to ID [--json] [PATH...]
       dsh-fs rewind --postgres URL --workspace NAME [--sandbox NAME] --to ID [--json] [PATH...]

Makes the sandbox (or PATH... and what lies below) exactly what it was at checkpoint ID: files,
directories, moves and removals. DIR itself is not touched. The rewind is a change too: it records
a new checkpoint, so it can be rewound in turn. An ID not kept is an error (exit status 1).

Options:
  --root DIR    the directory the sandbox is over (required)
${state}
${postgres}
  --to ID       the checkpoint to go back to (see "dsh-fs checkpoints"; required)
  --json        print { "rewoundTo", "checkpoint" (the new one, or null when nothing changed), "paths" }
${paths}
  -h, --help    show this help
`,
    log: `Usage: dsh-fs log --root DIR [--state DIR | --audit-file FILE] [--path P] [--owner O] [--tool T]
                  [--since TIME] [--until TIME] [--limit N] [--json]
       dsh-fs log --postgres URL --workspace NAME [--sandbox NAME] [...]
       dsh-fs log --sqlite FILE [--workspace NAME] [--sandbox NAME] [...]

Lists the tool calls "dsh-fs serve" (or a harness with the audit plugin) recorded, oldest first.
Each line: when the call started, its owner ("-" when unknown), the tool, "ok" or the error code,
then each path the call named (relative to DIR) with its version before and after the call
(10 characters of its digest; "-": nothing there, "?": could not be read). Contents are never
recorded: the arguments keep their size and SHA-256 digest instead.

Options:
  --root DIR    the directory the calls worked on (required)
${state}
                (the log is the file audit.jsonl there)
  --audit-file FILE  read this JSON-lines log instead (as "serve --audit-file" writes it; how
                "serve --mode direct" over DIR records)
${postgres}
                (without --sandbox, the calls of every sandbox of the workspace and of direct serving)
  --path P      only calls that named P or a path below it
  --owner O     only calls of this owner
  --tool T      only calls of this tool
  --since TIME  only calls at or after TIME (ISO 8601, e.g. 2026-12-03 or 2026-12-03T20:57:00Z)
  --until TIME  only calls before TIME
  --limit N     only the newest N of the matching calls
  --json        print { "records": [{ "time", "owner"?, "tool", "args", "outcome",
                "paths": [{ "path", "before"?, "after"? }] }] } (versions in full; null: absent)
  -h, --help    show this help
`,
  };
}
