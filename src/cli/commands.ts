export const COMMANDS = ['serve', 'status', 'diff', 'commit', 'discard', 'checkpoints', 'rewind', 'log', 'fork', 'mount', 'run', 'demo', 'import', 'export', 'review', 'reject', 'merge', 'sync'] as const;
export type Command = (typeof COMMANDS)[number];

export const isCommand = (value: string): value is Command => (COMMANDS as readonly string[]).includes(value);
