/** Where the command's output goes; the CLI passes the process streams, tests may pass others. */
export interface Io {
  readonly stdout: NodeJS.WritableStream & { readonly isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream & { readonly isTTY?: boolean };
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  /** Answers of an interactive command (`dsh-fs review`); default: the process's stdin. */
  readonly stdin?: NodeJS.ReadableStream;
}
