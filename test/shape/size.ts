import ts from 'typescript';

export const MAX_FILE_LINES = 400;
export const MAX_FUNCTION_LINES = 150;

/** One thing too long: a whole file (`kind: 'file'`) or a function starting at `line`. */
export interface Offence {
  readonly file: string;
  readonly line: number;
  readonly lines: number;
  readonly kind: 'file' | 'function';
  readonly name: string;
}

/** Lines as `wc -l` counts them: a final newline ends the last line rather than starting one. */
export function lineCount(text: string): number {
  if (text === '') return 0;
  const breaks = text.split('\n').length - 1;
  return text.endsWith('\n') ? breaks : breaks + 1;
}

function nameOf(node: ts.FunctionLikeDeclaration, source: ts.SourceFile): string {
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  if (node.name !== undefined) return node.name.getText(source);
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) {
    return parent.name.getText(source);
  }
  return '(anonymous)';
}

function isMeasured(node: ts.Node): node is ts.FunctionLikeDeclaration {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isFunctionExpression(node) ||
    ts.isArrowFunction(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node) ||
    ts.isConstructorDeclaration(node)
  );
}

/** What in one source file is over the limits; a function counts from its first to its last line. */
export function offences(file: string, text: string, limits = { file: MAX_FILE_LINES, fn: MAX_FUNCTION_LINES }): Offence[] {
  const found: Offence[] = [];
  const total = lineCount(text);
  if (total > limits.file) found.push({ file, line: 1, lines: total, kind: 'file', name: file });
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const visit = (node: ts.Node): void => {
    // An overload signature has no body: nothing to read there.
    if (isMeasured(node) && node.body !== undefined) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      if (lines > limits.fn) found.push({ file, line: first + 1, lines, kind: 'function', name: nameOf(node, source) });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

export function describe(offence: Offence): string {
  return offence.kind === 'file'
    ? `${offence.file}: ${offence.lines} lines (over ${MAX_FILE_LINES})`
    : `${offence.file}:${offence.line} ${offence.name}: ${offence.lines} lines (over ${MAX_FUNCTION_LINES})`;
}
