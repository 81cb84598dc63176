import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_FILE_LINES, MAX_FOLDER_FILES, MAX_FOLDER_LINES, MAX_FUNCTION_LINES, functionSizes, lineCount, oversized } from './size.js';

/**
 * No file under src/ over MAX_FILE_LINES lines, no function over MAX_FUNCTION_LINES (size.ts).
 * KNOWN lists what is over a limit and not split yet, each with the reason (empty: every src file
 * and function is within the limits, and ESLint holds them with no exception); anything else over
 * a limit fails. An entry that is back under its limit is reported so the list can shrink.
 */
const KNOWN_FILES: Record<string, string> = {};
const KNOWN_FUNCTIONS: Record<string, string> = {};

test('size limits: no unlisted src file over the line limit, no unlisted function over the function limit', (t) => {
  const r = oversized('src');
  const badFiles = r.files.filter((f) => KNOWN_FILES[f.file] === undefined).map((f) => `${f.file}: ${f.lines} lines`);
  const badFns = r.functions
    .filter((f) => KNOWN_FUNCTIONS[`${f.file} ${f.name}`] === undefined)
    .map((f) => `${f.file}:${f.line} ${f.name}: ${f.lines} lines`);
  const stale = [
    ...Object.keys(KNOWN_FILES).filter((k) => !r.files.some((f) => f.file === k)),
    ...Object.keys(KNOWN_FUNCTIONS).filter((k) => !r.functions.some((f) => `${f.file} ${f.name}` === k)),
  ];
  if (stale.length > 0) t.diagnostic(`listed but now within the limits (remove from KNOWN_*): ${stale.join(', ')}`);
  assert.deepEqual(badFiles, [], `files over ${MAX_FILE_LINES} lines`);
  assert.deepEqual(r.folders.map((f) => `${f.folder}: ${f.files} files, ${f.lines} lines`), [], `folders over ${MAX_FOLDER_FILES} files or ${MAX_FOLDER_LINES} lines`);
  assert.deepEqual(badFns, [], `functions over ${MAX_FUNCTION_LINES} lines`);
});

test('size limits: the counters see a long file and long functions of every kind', () => {
  const body = (n: number): string => Array.from({ length: n }, (_, i) => `  x += ${i};`).join('\n');
  const src = [
    `function decl(): void {\n  let x = 0;\n${body(MAX_FUNCTION_LINES)}\n}`,
    `class C {\n  method(): void {\n    let x = 0;\n${body(MAX_FUNCTION_LINES)}\n  }\n  short(): number { return 1; }\n}`,
    `const arrow = (): void => {\n  let x = 0;\n${body(MAX_FUNCTION_LINES)}\n};`,
    `function edge(): void {\n${body(MAX_FUNCTION_LINES - 2)}\n}`,
  ].join('\n');
  const sizes = functionSizes('mem.ts', src);
  const long = sizes.filter((f) => f.lines > MAX_FUNCTION_LINES).map((f) => f.name);
  assert.deepEqual(long, ['decl', 'method', 'arrow']);
  assert.equal(sizes.find((f) => f.name === 'edge')!.lines, MAX_FUNCTION_LINES);
  assert.equal(lineCount('a\nb\n'), 2);
  assert.equal(lineCount('a\nb'), 2);
  assert.ok(lineCount(src) > MAX_FILE_LINES / 2);
});
