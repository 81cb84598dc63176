/**
 * Size limits of the source tree (STYLE.md: one idea per file, one concept per room): a file under
 * src/ holds at most MAX_FILE_LINES lines, a function at most MAX_FUNCTION_LINES, and a folder (its
 * own files, not its subfolders' — a subfolder is a room of its own) at most MAX_FOLDER_FILES
 * files and MAX_FOLDER_LINES lines. ESLint's max-lines and max-lines-per-function hold the first
 * two as well (eslint.config.js). Functions are found with the
 * TypeScript compiler API (declarations, methods, accessors, constructors, function expressions
 * and arrow functions); a function's length is the line span from its first token to its closing
 * brace, so a nested function counts inside its parent too.
 *
 * Run directly for the full report: `node --import tsx test/style/size.ts`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const MAX_FILE_LINES = 600;
export const MAX_FUNCTION_LINES = 100;
export const MAX_FOLDER_FILES = 15;
export const MAX_FOLDER_LINES = 3000;

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface FunctionSize {
  file: string;
  name: string;
  line: number;
  lines: number;
}

/** Lines of a text as an editor counts them (a final newline does not start a new line). */
export function lineCount(text: string): number {
  if (text.length === 0) return 0;
  const n = text.split('\n').length;
  return text.endsWith('\n') ? n - 1 : n;
}

function functionName(node: ts.Node, sf: ts.SourceFile): string {
  const named = node as ts.Node & { name?: ts.Node };
  if (named.name !== undefined) return named.name.getText(sf);
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (parent !== undefined && (ts.isVariableDeclaration(parent) || ts.isPropertyDeclaration(parent) || ts.isPropertyAssignment(parent))) {
    return parent.name.getText(sf);
  }
  return '(anonymous)';
}

/** Every function-like node of `text` with its line span. */
export function functionSizes(file: string, text: string): FunctionSize[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out: FunctionSize[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && (node as ts.Node & { body?: ts.Node }).body !== undefined) {
      const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      out.push({ file, name: functionName(node, sf), line: start + 1, lines: end - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** The .ts files under `dir` (relative to the repository root), sorted. */
export function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const e of fs.readdirSync(path.join(REPO_ROOT, rel), { withFileTypes: true })) {
      const r = path.join(rel, e.name);
      if (e.isDirectory()) walk(r);
      else if (e.name.endsWith('.ts')) out.push(r);
    }
  };
  walk(dir);
  return out.sort();
}

export interface SizeReport {
  files: { file: string; lines: number }[];
  functions: FunctionSize[];
  /** folders over MAX_FOLDER_FILES files or MAX_FOLDER_LINES lines (their own .ts files) */
  folders: { folder: string; files: number; lines: number }[];
}

/** Files over MAX_FILE_LINES and functions over MAX_FUNCTION_LINES under `dir`. */
export function oversized(dir = 'src'): SizeReport {
  const files: SizeReport['files'] = [];
  const functions: FunctionSize[] = [];
  const byFolder = new Map<string, { files: number; lines: number }>();
  for (const f of sourceFiles(dir)) {
    const text = fs.readFileSync(path.join(REPO_ROOT, f), 'utf8');
    const lines = lineCount(text);
    if (lines > MAX_FILE_LINES) files.push({ file: f, lines });
    for (const fn of functionSizes(f, text)) if (fn.lines > MAX_FUNCTION_LINES) functions.push(fn);
    const folder = path.dirname(f);
    const sum = byFolder.get(folder) ?? { files: 0, lines: 0 };
    sum.files++;
    sum.lines += lines;
    byFolder.set(folder, sum);
  }
  const folders = [...byFolder]
    .filter(([, s]) => s.files > MAX_FOLDER_FILES || s.lines > MAX_FOLDER_LINES)
    .map(([folder, s]) => ({ folder, ...s }));
  return { files, functions, folders };
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const r = oversized();
  for (const f of r.files) console.log(`file ${f.file}: ${f.lines} lines (limit ${MAX_FILE_LINES})`);
  for (const f of r.functions) console.log(`function ${f.file}:${f.line} ${f.name}: ${f.lines} lines (limit ${MAX_FUNCTION_LINES})`);
  for (const f of r.folders) console.log(`folder ${f.folder}: ${f.files} files, ${f.lines} lines (limits ${MAX_FOLDER_FILES}, ${MAX_FOLDER_LINES})`);
  if (r.files.length + r.functions.length + r.folders.length === 0) console.log('no file, function or folder over the limits');
}
