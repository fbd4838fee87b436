export type ColorMode = 'auto' | 'always' | 'never';

export interface Colors {
  readonly enabled: boolean;
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
}

/** `auto` colours a terminal unless NO_COLOR is set (https://no-color.org) or TERM is dumb. */
export function colorsFor(stream: { readonly isTTY?: boolean }, mode: ColorMode = 'auto', env: NodeJS.ProcessEnv = process.env): Colors {
  const enabled =
    mode === 'always' ||
    (mode === 'auto' && stream.isTTY === true && !env.NO_COLOR && env.TERM !== 'dumb');
  const sgr = (open: number, close: number) => (text: string) => (enabled && text !== '' ? `\x1b[${open}m${text}\x1b[${close}m` : text);
  return {
    enabled,
    bold: sgr(1, 22),
    dim: sgr(2, 22),
    red: sgr(31, 39),
    green: sgr(32, 39),
    yellow: sgr(33, 39),
    cyan: sgr(36, 39),
  };
}

/** Colours a unified diff line by line, as git does. */
export function colorDiff(diff: string, c: Colors): string {
  if (!c.enabled) return diff;
  return diff
    .split('\n')
    .map((line) => {
      if (/^(diff --git |new file mode |deleted file mode |--- |\+\+\+ )/.test(line)) return c.bold(line);
      if (line.startsWith('@@')) return c.cyan(line);
      if (line.startsWith('+')) return c.green(line);
      if (line.startsWith('-')) return c.red(line);
      if (line.startsWith('\\')) return c.dim(line);
      return line;
    })
    .join('\n');
}
