import type { Command } from './commands.js';
import { historyHelp } from './help-history.js';
import { reviewHelp } from './help-review.js';

// The quota, for the commands that write (serve, mount, run).
const QUOTA_HELP = `  --max-bytes N  refuse (FS_QUOTA_EXCEEDED; EDQUOT through a mount) any change that would make
                the sandbox hold more than N bytes of files (500M, 2GiB: units of 1000 or 1024);
                in --mode direct, the directory or workspace as a whole. Not kept with the
                sandbox: give it to every command that writes. See docs/quota.md
  --max-files N  the same for the number of files (links count; directories do not)`;
import { mergeHelp } from './help-merge.js';

// The options `mount` and `run` share after --state.
const MOUNT_HELP = `  --read-only   refuse every change (EROFS)
  --cache SECONDS  let the kernel answer lookups and stats from its cache for up to SECONDS
                (default 0): faster, but a change made by another writer (an agent through
                "dsh-fs serve", a commit) may go unseen by programs for that long
${QUOTA_HELP}`;

const STATE_HELP = `  --state DIR   where the sandbox keeps its changes (default: $XDG_STATE_HOME/dsh-fs/<hash of DIR>,
                or ~/.local/state/dsh-fs/<hash of DIR>); must lie outside --root`;

const POSTGRES_HELP = `  --postgres URL     instead of --root and --state: a workspace in PostgreSQL (a connection string,
                     postgresql://user@host:port/db); the sandbox is kept in the same database
  --workspace NAME   the workspace (required with --postgres)
  --sandbox NAME     the sandbox's name in the database (default: the workspace's name)
  --sqlite FILE      instead of --root and --state: a workspace in a SQLite file (created when
                     missing); the sandbox is kept in the same file, and --workspace is optional
                     (default: default)`;
const AGAINST_HELP = `  --against-parent  for a fork (dsh-fs fork): compare with the sandbox it was forked from, as
                it was then, instead of DIR: what this attempt did differently`;

const PATHS_HELP = `  PATH...       limit the command to these files or directories (each selects everything beneath it);
                relative to the current directory when it is inside --root, else to --root`;

export const MAIN_HELP = `dsh-fs — file tools for AI agents (read, write, edit, list, glob, grep, move, delete) over MCP, on a directory or a reviewable sandbox of it

Usage:
  dsh-fs serve   --root DIR [--mode sandbox|direct] [--state DIR] [--allow-delete] [--tools LIST] [--rewind-tool] [--max-request-bytes N] [--no-audit | --audit-file FILE]
  dsh-fs status  --root DIR [--state DIR] [--against-parent] [--json] [PATH...]
  dsh-fs diff    --root DIR [--state DIR] [--against-parent | --from ID [--to ID]] [--color auto|always|never] [--json] [PATH...]
  dsh-fs commit  --root DIR [--state DIR] [--force] [--include-ignored] [--json] [PATH...]
  dsh-fs commit  --root DIR [--state DIR] --hunk ID [--hunk ID...] [--against-parent] [--json]
  dsh-fs review  --root DIR [--state DIR] [--against-parent] [--json | --web [--port N]] [PATH...]
  dsh-fs reject  --root DIR [--state DIR] [--against-parent] (--hunk ID... [--reason TEXT] | PATH...) [--json]
  dsh-fs discard --root DIR [--state DIR] [--json] [PATH...]
  dsh-fs checkpoints --root DIR [--state DIR] [--json]
  dsh-fs rewind  --root DIR [--state DIR] --to ID [--json] [PATH...]
  dsh-fs log     --root DIR [--state DIR] [--path P] [--owner O] [--tool T] [--since TIME] [--json]
  dsh-fs fork    --root DIR [--state DIR] --into NEWSTATE [--json]
  dsh-fs merge   --root DIR [--state DIR] --from FORK_STATE [--markers] [--dry-run] [--json]
  dsh-fs sync    --root DIR [--state DIR] [--markers] [--dry-run] [--json]
  dsh-fs mount   --root DIR [--mode sandbox|direct] [--state DIR] [--read-only] [--cache SECONDS] MOUNTPOINT
  dsh-fs run     --root DIR [--mode sandbox|direct] [--state DIR] [--read-only] [--cache SECONDS] [--jail [--no-network]] [--fork NEWSTATE] [--json] -- CMD [ARG...]
  dsh-fs demo    [--keep DIR]
  dsh-fs serve|status|diff|commit|discard|checkpoints|rewind|log|mount|run --postgres URL --workspace NAME [--sandbox NAME] [...]
  dsh-fs serve|status|diff|commit|discard|checkpoints|rewind|log|mount|run --sqlite FILE [--workspace NAME] [--sandbox NAME] [...]
  dsh-fs import  --root DIR --postgres URL --workspace NAME [--overwrite] [--json]
  dsh-fs export  --postgres URL --workspace NAME --root DIR [--overwrite] [--json]

Commands:
  serve     run an MCP server on stdio with the read, write, edit, list, glob and grep tools
            (and move and delete in a sandbox, or with --allow-delete)
  status    list the changes an agent made in the sandbox
  diff      show those changes as a unified diff
  commit    write the sandbox's changes to the directory, refusing any that conflict
  discard   drop the sandbox's changes
  review    review the sandbox's changes hunk by hunk (terminal, --json or --web)
  reject    revert hunks or files in the sandbox, with a reason the agent is told
  checkpoints  list the sandbox's checkpoints (one per change)
  rewind    make the sandbox what it was at a checkpoint
  log       list the tool calls served: who changed what, when, with what outcome
  fork      fork the sandbox into a new state directory (shared, not copied) that another serve can use
  merge     three-way merge a fork into the sandbox it was forked from
  sync      three-way merge what changed in DIR since the sandbox read it into the sandbox
  mount     serve the sandbox (or DIR) through FUSE at a mountpoint, so any program can use it
  run       run a command in the sandbox, mounted at a temporary directory, then unmount
  demo      run a scripted agent session on a sample project in a temporary directory
  import    copy a directory tree into a PostgreSQL workspace
  export    copy a PostgreSQL workspace into a directory

Options:
  -h, --help      show help (also after a command: dsh-fs serve --help)
  -v, --version   print the version

Exit status: 0 success, 1 failure or commit conflict, 2 usage error.
`;

export const HELP: Record<Command, string> = {
  serve: `Usage: dsh-fs serve --root DIR [--mode sandbox|direct] [--state DIR] [--allow-delete]
                    [--tools patch,text-editor] [--rewind-tool] [--max-request-bytes N]
                    [--max-bytes N] [--max-files N]
                    [--no-audit | --audit-file FILE]
       dsh-fs serve --postgres URL --workspace NAME [--sandbox NAME] [--mode sandbox|direct] [...]
       dsh-fs serve --sqlite FILE [--workspace NAME] [--sandbox NAME] [--mode sandbox|direct] [...]

Runs an MCP server on stdin/stdout exposing the tools read, write, edit, list, glob and grep, and
in sandbox mode move and delete, confined to DIR, under the observation policy: a session must
read a file before it overwrites, edits, deletes or moves something onto it, and a change made
since that read is refused. An MCP client starts this command itself; run by
hand, it waits for MCP messages on stdin (Ctrl-C stops it).

Options:
  --root DIR    the directory the tools work on (required)
  --mode MODE   sandbox (default): changes go to a copy-on-write sandbox over DIR; DIR itself is
                only written by "dsh-fs commit". direct: changes are written to DIR.
${STATE_HELP}
                (sandbox mode only)
  --allow-delete  also serve move and delete in direct mode (a sandbox always serves them:
                its changes are reviewed before they reach DIR)
  --tools LIST  also serve the models' own editing tools, a comma-separated list of:
                  patch        apply_patch (the V4A patch format of OpenAI's models)
                  text-editor  str_replace_based_edit_tool (Anthropic's text editor commands)
                under the same read-before-write rule; patch can delete and move files, so in
                direct mode it needs --allow-delete
                  review       review_list and review_decide (sandbox mode only): for a
                               supervising client, never for the agent under review, which
                               could approve its own changes (see docs/review.md)
  --rewind-tool also serve rewind (sandbox mode only): the model may take the sandbox, or some
                paths of it, back to a checkpoint (off by default)
${POSTGRES_HELP}
  --max-request-bytes N
                the largest MCP message accepted, in bytes (default 67108864, 64 MiB); a larger
                request is answered with an error (FS_TOO_LARGE) and the server goes on
${QUOTA_HELP}
  --no-audit    do not record tool calls (by default each is appended to the audit log next to
                the data: STATE/audit.jsonl, or the database's dsh_fs_audit table; see "dsh-fs log";
                --mode direct over DIR records only with --audit-file)
  --audit-file FILE  record them to this JSON-lines file instead
  -h, --help    show this help

Each MCP session is one agent session for the policy. In sandbox mode the server lists the
checkpoints as the resource dsh-fs://checkpoints, and each change a tool makes is labelled on its
checkpoint (source tool:NAME, owner the client's name). Only MCP messages go to stdout; logs go to
stderr. The sandbox is saved after every change, so "dsh-fs status", "diff", "commit" and
"discard" work from another terminal while the server runs.
`,
  status: `Usage: dsh-fs status --root DIR [--state DIR] [--against-parent] [--json] [PATH...]
       dsh-fs status --postgres URL --workspace NAME [--sandbox NAME] [--json] [PATH...]
       dsh-fs status --sqlite FILE [--workspace NAME] [--sandbox NAME] [--json] [PATH...]

Lists the changes in the sandbox over DIR, one per line: A (added), M (modified) or D (deleted),
then the path relative to DIR.

Options:
  --root DIR    the directory the sandbox is over (required)
${STATE_HELP}
${POSTGRES_HELP}
${AGAINST_HELP}
  --json        print the changes as JSON: { "changes": [{ "path", "kind", "size"? }],
                "ignored": [{ "path", "ignored", "count" }], "removedTempFiles": [...] }
                (temp files a killed commit left, now removed)

Ignored outputs (what .gitignore or .git/info/exclude excludes) and git's own files (.git/) are
counted, one line per top directory ("! node_modules/ (412 files, ignored)"), not listed.
${PATHS_HELP}
  -h, --help    show this help
`,
  diff: `Usage: dsh-fs diff --root DIR [--state DIR] [--against-parent | --from ID [--to ID]] [--color auto|always|never] [--json] [PATH...]
       dsh-fs diff --postgres URL --workspace NAME [--sandbox NAME] [--color auto|always|never] [--json] [PATH...]
       dsh-fs diff --sqlite FILE [--workspace NAME] [--sandbox NAME] [--color auto|always|never] [--json] [PATH...]

Prints the sandbox's changes as a git-style unified diff, from DIR as it is now to the sandbox.

Options:
  --root DIR        the directory the sandbox is over (required)
${STATE_HELP}
${POSTGRES_HELP}
${AGAINST_HELP}
  --from ID         compare checkpoint ID (see "dsh-fs checkpoints") with the sandbox now instead of DIR
  --to ID           with --from: compare with checkpoint ID instead of the sandbox now
  --color WHEN      auto (default: coloured on a terminal, unless NO_COLOR is set), always, never
  --json            print one entry per changed file: [{ "path", "kind", "diff" }], then one
                    per counted top directory of ignored outputs or git's files:
                    { "path", "ignored": "gitignore" | "git", "count" }
${PATHS_HELP}
  -h, --help        show this help
`,
  commit: `Usage: dsh-fs commit --root DIR [--state DIR] [--force] [--include-ignored] [--json] [PATH...]
       dsh-fs commit --postgres URL --workspace NAME [--sandbox NAME] [--force] [--include-ignored] [--json] [PATH...]
       dsh-fs commit --sqlite FILE [--workspace NAME] [--sandbox NAME] [--force] [--include-ignored] [--json] [PATH...]

Writes the sandbox's changes to DIR. A file that changed in DIR since the sandbox first saw it is
a conflict: it is reported and left untouched, and stays in the sandbox. Look at it with
"dsh-fs diff PATH", then keep the sandbox's version with "dsh-fs commit --force PATH" or DIR's
with "dsh-fs discard PATH". Progress goes to stderr. Exit status 1 when anything conflicted or
failed.

Options:
  --root DIR    the directory to commit to (required)
${STATE_HELP}
${POSTGRES_HELP}
  --force       commit conflicting files too, replacing what DIR holds now (a path that now
                leads elsewhere through a symlink is still refused)
  --hunk ID     commit only this hunk (an id from "dsh-fs review --json"); may be given several
                times; not with PATH or --force
  --against-parent
                with --hunk, for a fork (dsh-fs fork): write the hunks to the sandbox it was
                forked from instead of DIR (ids from "dsh-fs review --against-parent --json")
  --include-ignored
                commit ignored outputs and git's own files (.git/) too; they are left out
                otherwise. Git's files go whole or not at all: one that changed in DIR since
                (a ref, the index) makes every one a conflict
  --json        print the report as JSON: { "committed": [{ "path", "kind", "forced"? }],
                "conflicts": [{ "path", "kind", "code", "message" }], "failed": [...],
                "ignored": [{ "path", "ignored", "count" }] } (left out); ignored changes
                committed are counted in "committed" the same way
${PATHS_HELP}
  -h, --help    show this help
`,
  discard: `Usage: dsh-fs discard --root DIR [--state DIR] [--json] [PATH...]
       dsh-fs discard --postgres URL --workspace NAME [--sandbox NAME] [--json] [PATH...]
       dsh-fs discard --sqlite FILE [--workspace NAME] [--sandbox NAME] [--json] [PATH...]

Drops the sandbox's changes: those paths show DIR's content again.

Options:
  --root DIR    the directory the sandbox is over (required)
${STATE_HELP}
${POSTGRES_HELP}
  --json        print what was dropped as JSON: { "discarded": [{ "path", "kind" }] }
${PATHS_HELP}
  -h, --help    show this help
`,
  import: `Usage: dsh-fs import --root DIR --postgres URL --workspace NAME [--overwrite] [--json]

Copies the tree at DIR into the PostgreSQL workspace NAME (created if missing), in one
transaction: files (with their modification times), directories and symbolic links. A link whose
target lies outside DIR is skipped and listed; so are sockets, FIFOs and devices.

Options:
  --root DIR         the directory to copy (required)
  --postgres URL     the database (required)
  --workspace NAME   the workspace to copy into (required)
  --overwrite        allow a workspace that is not empty: copied paths replace what is there,
                     nothing else is removed (default: refuse, FS_ALREADY_EXISTS)
  --json             print the counts as JSON: { "files", "directories", "symlinks", "bytes", "skipped": [...] }
  -h, --help         show this help
`,
  export: `Usage: dsh-fs export --postgres URL --workspace NAME --root DIR [--overwrite] [--json]

Copies the PostgreSQL workspace NAME into the directory DIR (created if missing): files (with
their modification times), directories and symbolic links (an absolute link is written relative
to its directory).

Options:
  --postgres URL     the database (required)
  --workspace NAME   the workspace to copy (required)
  --root DIR         the directory to copy into (required)
  --overwrite        allow a DIR that is not empty: copied paths replace what is there (a link
                     there is replaced, not followed), nothing else is removed (default: refuse,
                     FS_ALREADY_EXISTS)
  --json             print the counts as JSON, as import does
  -h, --help         show this help
`,
  fork: `Usage: dsh-fs fork --root DIR [--state DIR] --into NEWSTATE [--json]

Makes NEWSTATE a fork of the sandbox over DIR: a sandbox that starts with the same changes, and
from then on changes on its own ("dsh-fs serve --root DIR --state NEWSTATE" serves it). The fork
shares the saved changes and their contents with the sandbox instead of copying them (hard links).
Use it to let several agents try the same task side by side: compare each attempt with
"dsh-fs diff --state NEWSTATE --against-parent", commit the one to keep, and delete the other
state directories.

Options:
  --root DIR       the directory the sandbox is over (required)
${STATE_HELP}
  --into NEWSTATE  the fork's state directory (required): absent or empty, outside --root
  --json           print { "stateDir", "parent", "changes" }
  -h, --help       show this help
`,
  mount: `Usage: dsh-fs mount --root DIR [--mode sandbox|direct] [--state DIR] [--read-only] [--cache SECONDS] MOUNTPOINT
       dsh-fs mount --postgres URL --workspace NAME [--sandbox NAME] [--mode sandbox|direct] [--read-only] MOUNTPOINT
       dsh-fs mount --sqlite FILE [--workspace NAME] [--sandbox NAME] [--mode sandbox|direct] [--read-only] MOUNTPOINT

Serves the sandbox over DIR (or DIR itself with --mode direct) through FUSE at MOUNTPOINT, an
existing directory, so that any program (a shell, a compiler, git) reads and writes it. Runs in
the foreground until Ctrl-C or SIGTERM, then unmounts. Changes land in the sandbox: review them
with "dsh-fs status", "diff", "commit" and "discard". A file a program writes is published when
it closes it, whole; if the file changed in the sandbox since the program opened it, the close
fails (EIO) and the other change is kept. Needs FUSE: apt-get install -y libfuse2 fuse, and the
optional package fuse-native. See docs/mount.md.

Options:
  --root DIR    the directory (required)
  --mode MODE   sandbox (default) or direct, as for "dsh-fs serve"
${STATE_HELP}
                (sandbox mode only)
${MOUNT_HELP}
${POSTGRES_HELP}
  -h, --help    show this help
`,
  run: `Usage: dsh-fs run --root DIR [--mode sandbox|direct] [--state DIR] [--read-only] [--cache SECONDS] [--jail [--no-network]]
                  [--fork NEWSTATE] [--json] -- CMD [ARG...]
       dsh-fs run --postgres URL --workspace NAME [--sandbox NAME] [--mode sandbox|direct] [...] -- CMD [ARG...]
       dsh-fs run --sqlite FILE [--workspace NAME] [--sandbox NAME] [--mode sandbox|direct] [...] -- CMD [ARG...]

Runs CMD in the sandbox over DIR and exits with CMD's exit status (1 when CMD succeeded but a
path was a conflict). DIR itself is untouched: the changes stay in the sandbox for
"dsh-fs status", "diff", "commit" and "discard", as one checkpoint for "dsh-fs rewind".
A sandbox over DIR runs on kernel overlayfs mounted at DIR's own path in a private namespace;
CMD starts in the current directory when it lies in DIR. What CMD changed is imported when it
ends; a path the sandbox changed meanwhile is a conflict, kept as the sandbox has it (CMD's
version goes to STATE/run/conflicts/). A summary follows CMD's output on stderr (docs/run.md).
Elsewhere (--postgres, --sqlite, --mode direct, --read-only, no overlayfs here) the sandbox is
mounted through FUSE at a temporary directory instead, and run says so.

Options:
  --root DIR    the directory (required)
  --mode MODE   sandbox (default) or direct, as for "dsh-fs serve"
${STATE_HELP}
                (sandbox mode only)
${MOUNT_HELP}
  --jail        run CMD in bubblewrap: everything read-only but the mount, a private /tmp
                (needs bwrap: apt-get install -y bubblewrap)
  --no-network  with --jail: no network either
  --json        print what the run imported (and its conflicts) as JSON on stdout
  --fork NEWSTATE  first fork the sandbox into NEWSTATE (as "dsh-fs fork --into"), then run in
                the fork: the sandbox itself is left as it was; compare with
                "dsh-fs diff --state NEWSTATE --against-parent" (not with --postgres or --sqlite)
${POSTGRES_HELP}
  -h, --help    show this help
`,
  demo: `Usage: dsh-fs demo [--keep DIR]

Creates a small sample project in a temporary directory and runs a scripted agent session against
a sandbox over it, printing each tool call and its result: a read, a glob and a grep, a refused
blind overwrite, a refused stale edit after an outside change, an edit of a CRLF file, an
ambiguous edit and its fix, then the diff and a commit. The temporary directory is removed
afterwards.

Options:
  --keep DIR    work in DIR (created if missing; must be empty) and keep it: the session's changes
                stay in the sandbox, uncommitted, and the status/diff/commit commands to try next
                are printed
  -h, --help    show this help
`,
  ...historyHelp(STATE_HELP, POSTGRES_HELP, PATHS_HELP),
  ...reviewHelp(STATE_HELP, POSTGRES_HELP, PATHS_HELP),
  ...mergeHelp(STATE_HELP, POSTGRES_HELP),
};
