// Help for review by hunk (review, reject); the option texts are help.ts's.

const AGAINST = `  --against-parent
                for a fork made by "dsh-fs fork --into" (--state is the fork): review it against
                the sandbox it was forked from, as that is now; accepted hunks are written to
                that sandbox (a file it changed since the fork is a conflict), not to DIR`;

export function reviewHelp(state: string, postgres: string, paths: string) {
  return {
    review: `Usage: dsh-fs review --root DIR [--state DIR] [--against-parent] [--json] [PATH...]
       dsh-fs review --root DIR [--state DIR] [--against-parent] --web [--port N]
       dsh-fs review --postgres URL --workspace NAME [--sandbox NAME] [...]
       dsh-fs review --sqlite FILE [--workspace NAME] [--sandbox NAME] [...]

Reviews the sandbox's changes hunk by hunk. In a terminal it walks them as "git add -p" does,
asking for each hunk (or each file without lines: binary, link, mode, directory):
  y accept, n reject, r reject with a reason the agent is told, s skip, q quit, ? help
and applies the decisions at the end in one change: accepted hunks are written to DIR (a file
changed in DIR since the sandbox first saw it is a conflict: nothing is written to it), rejected
ones are reverted in the sandbox. Answers are read from stdin, one per line.

Options:
  --root DIR    the directory the sandbox is over (required)
${state}
${postgres}
${AGAINST}
  --json        print the changes without asking: { "files": [{ "path", "status", "kind", "id",
                "hunks": [{ "id", "oldStart", "oldLines", "newStart", "newLines", "lines" }] }] }
                ("lines" as in a unified diff, with their "+", "-" or " "; ids go to
                "dsh-fs commit --hunk ID" and "dsh-fs reject --hunk ID")
  --web         serve the review page on 127.0.0.1 and print its address (with a token)
  --port N      the page's port (default: a free one)
${paths}
  -h, --help    show this help
`,
    reject: `Usage: dsh-fs reject --root DIR [--state DIR] [--against-parent] --hunk ID [--hunk ID...] [--reason TEXT] [--json]
       dsh-fs reject --root DIR [--state DIR] [--against-parent] [--reason TEXT] [--json] PATH...
       dsh-fs reject --postgres URL --workspace NAME [--sandbox NAME] [...]
       dsh-fs reject --sqlite FILE [--workspace NAME] [--sandbox NAME] [...]

Reverts changes in the sandbox: the hunks given (ids from "dsh-fs review --json"), or whole files
(PATH...). DIR is not touched. The reason is told to the agent once, on its next tool result
through "dsh-fs serve", in any process (for --postgres and --sqlite it waits in the database). An
id whose hunk changed since it was listed is refused (exit status 1) and nothing is reverted.

Options:
  --root DIR    the directory the sandbox is over (required)
${state}
${postgres}
${AGAINST}
  --hunk ID     a hunk (or a whole file's id) to reject; may be given several times
  --reason TEXT why: told to the agent with the file and the lines
  --json        print { "accepted": [], "rejected": [ids], "conflicts": [] }
${paths}
  -h, --help    show this help
`,
  };
}
