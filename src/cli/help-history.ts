// Help for the history commands (checkpoints, rewind); the option texts are help.ts's.

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
  };
}
