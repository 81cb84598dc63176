/**
 * An in-repository checker for Prometheus text exposition (format 0.0.4) that reports what
 * `promtool check metrics` reports, so that the metrics are checked even where promtool is not
 * installed (test/crawl/metrics-promtool.test.ts runs promtool itself too, and fails without it).
 *
 * Parse errors (promtool exits 1 on these; the text parser of prometheus/common/expfmt):
 * a malformed line, an invalid metric or label name, a bad label-value escape, a value that is
 * not a float, a repeated label name within a sample, a HELP or TYPE given twice for a family,
 * a TYPE after the family's samples, a family whose lines are not contiguous. Stricter than
 * promtool: two samples with the same name and labels.
 *
 * Lint problems (promtool exits 3 on these; the rules of client_golang's promlint, restated):
 * no HELP; a scaled or non-base unit in the name (`megabytes`, `milliseconds`, `minutes`…); a
 * counter without `_total` or a gauge with it; `_count`/`_sum`/`_bucket` or `le`/`quantile` on a
 * type that does not own them; the type in the name; ':' in the name; camelCase names or label
 * names; an abbreviated unit as a name part (`_ms`, `_mb`, `_s`…).
 */

export interface LintReport {
  errors: string[];
  problems: { metric: string; text: string }[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
const ABBREVIATIONS = ['s', 'ms', 'us', 'ns', 'sec', 'b', 'kb', 'mb', 'gb', 'tb', 'pb', 'm', 'h', 'd'];
const PREFIXES = ['pico', 'nano', 'micro', 'milli', 'centi', 'deci', 'deca', 'hecto', 'kilo', 'kibi', 'mega', 'mibi', 'giga', 'gibi', 'tera', 'tebi', 'peta', 'pebi'];
const UNITS: Record<string, string> = {
  amperes: 'amperes', bytes: 'bytes', celsius: 'celsius', grams: 'grams', joules: 'joules', kelvin: 'kelvin', meters: 'meters',
  metres: 'metres', seconds: 'seconds', volts: 'volts', minutes: 'seconds', hours: 'seconds', days: 'seconds', weeks: 'seconds',
  kelvins: 'kelvin', fahrenheit: 'celsius', rankine: 'celsius', inches: 'meters', yards: 'meters', miles: 'meters', bits: 'bytes',
  calories: 'joules', pounds: 'grams', ounces: 'grams',
};

interface Family {
  name: string;
  type: string;
  help: string | null;
  labelNames: Set<string>;
  typed: boolean;
  samples: number;
}

/** The family a sample name belongs to, given the declared families (histogram/summary suffixes). */
function familyOf(sample: string, families: Map<string, Family>): Family | undefined {
  const direct = families.get(sample);
  if (direct !== undefined) return direct;
  for (const suffix of ['_bucket', '_count', '_sum']) {
    if (!sample.endsWith(suffix)) continue;
    const f = families.get(sample.slice(0, -suffix.length));
    if (f !== undefined && (f.type === 'histogram' || (f.type === 'summary' && suffix !== '_bucket'))) return f;
  }
  return undefined;
}

/** Labels of `{…}` starting at text[i] === '{'; returns names and the index after '}', or an error. */
function parseLabels(text: string, i: number): { names: string[]; key: string; end: number } | string {
  const names: string[] = [];
  const parts: string[] = [];
  i++;
  for (;;) {
    while (text[i] === ' ') i++;
    if (text[i] === '}') return { names, key: parts.sort().join(','), end: i + 1 };
    const m = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(text.slice(i));
    if (m === null) return `invalid label name at column ${i + 1}`;
    const name = m[0];
    i += name.length;
    while (text[i] === ' ') i++;
    if (text[i] !== '=') return `expected '=' after label ${name}`;
    i++;
    while (text[i] === ' ') i++;
    if (text[i] !== '"') return `expected '"' to start the value of label ${name}`;
    i++;
    let value = '';
    for (;;) {
      const c = text[i];
      if (c === undefined) return `unterminated value of label ${name}`;
      if (c === '"') break;
      if (c === '\\') {
        const n = text[i + 1];
        if (n === '\\' || n === '"') value += n;
        else if (n === 'n') value += '\n';
        else return `invalid escape \\${n ?? ''} in label ${name}`;
        i += 2;
        continue;
      }
      value += c;
      i++;
    }
    i++;
    if (names.includes(name)) return `label ${name} repeated`;
    names.push(name);
    parts.push(`${name}=${JSON.stringify(value)}`);
    while (text[i] === ' ') i++;
    if (text[i] === ',') i++;
    else if (text[i] !== '}') return `expected ',' or '}' after label ${name}`;
  }
}

/** Parse the text and lint every family, as `promtool check metrics` does. */
export function promlint(text: string): LintReport {
  const errors: string[] = [];
  const families = new Map<string, Family>();
  const series = new Set<string>();
  /** Families whose lines ended (another family's line came after them). */
  const ended = new Set<string>();
  let current: Family | undefined;
  /** Make `f` the family of the current line; its lines must be contiguous. */
  const enter = (f: Family, at: string): void => {
    if (current === f) return;
    if (ended.has(f.name)) errors.push(`${at}: lines of family ${f.name} are not contiguous`);
    if (current !== undefined) ended.add(current.name);
    current = f;
  };
  const family = (name: string): Family => {
    let f = families.get(name);
    if (f === undefined) {
      f = { name, type: 'untyped', typed: false, help: null, labelNames: new Set(), samples: 0 };
      families.set(name, f);
    }
    return f;
  };
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  else errors.push('the text does not end in a newline');
  lines.forEach((line, n) => {
    const at = `line ${n + 1}`;
    if (line.trim() === '') return;
    if (line.startsWith('#')) {
      const m = /^#\s+(HELP|TYPE)\s+(\S+)(?:\s(.*))?$/.exec(line);
      if (m === null) return; // a plain comment
      const [, kind, name, rest = ''] = m as unknown as [string, string, string, string?];
      if (!NAME.test(name)) return void errors.push(`${at}: invalid metric name ${name}`);
      const f = family(name);
      enter(f, at);
      if (kind === 'HELP') {
        if (f.help !== null) errors.push(`${at}: second HELP line for ${name}`);
        f.help = rest;
      } else {
        if (!TYPES.has(rest.trim())) return void errors.push(`${at}: unknown type "${rest}" for ${name}`);
        if (f.samples > 0) errors.push(`${at}: TYPE for ${name} after its samples`);
        if (f.typed) errors.push(`${at}: second TYPE line for ${name}`);
        f.type = rest.trim();
        f.typed = true;
      }
      return;
    }
    const m = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
    if (m === null) return void errors.push(`${at}: invalid metric name in "${line}"`);
    const name = m[0];
    let i = name.length;
    let labelNames: string[] = [];
    let key = '';
    if (line[i] === '{') {
      const l = parseLabels(line, i);
      if (typeof l === 'string') return void errors.push(`${at}: ${l}`);
      labelNames = l.names;
      key = l.key;
      i = l.end;
    }
    const rest = line.slice(i).trim().split(/\s+/);
    if (line[i] !== ' ' || rest.length < 1 || rest.length > 2) return void errors.push(`${at}: expected "name{labels} value [timestamp]"`);
    const v = rest[0]!;
    if (!/^[+-]?(Inf|NaN|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)$/.test(v)) errors.push(`${at}: value "${v}" is not a float`);
    if (rest[1] !== undefined && !/^-?\d+$/.test(rest[1])) errors.push(`${at}: timestamp "${rest[1]}" is not an integer`);
    const f = familyOf(name, families) ?? family(name);
    enter(f, at);
    f.samples++;
    for (const l of labelNames) f.labelNames.add(l);
    const id = `${name}{${key}}`;
    if (series.has(id)) errors.push(`${at}: duplicate series ${id}`);
    series.add(id);
  });
  const problems: { metric: string; text: string }[] = [];
  for (const f of families.values()) for (const text of lintFamily(f)) problems.push({ metric: f.name, text });
  problems.sort((a, b) => (a.metric === b.metric ? (a.text < b.text ? -1 : 1) : a.metric < b.metric ? -1 : 1));
  return { errors, problems };
}

function lintFamily(f: Family): string[] {
  const out: string[] = [];
  const n = f.name;
  const lower = n.toLowerCase();
  const has = (part: string): boolean => lower.includes(`_${part}_`) || lower.endsWith(`_${part}`);
  if (f.help === null) out.push('no help text');
  for (const part of n.split('_')) {
    const unit = Object.keys(UNITS).find((u) => part === u || PREFIXES.some((p) => part === p + u));
    if (unit !== undefined && part !== UNITS[unit]) {
      out.push(`use base unit "${UNITS[unit]}" instead of "${part}"`);
      break;
    }
  }
  const total = n.endsWith('_total');
  if (f.type === 'counter' && !total) out.push('counter metrics should have "_total" suffix');
  if (f.type !== 'untyped' && f.type !== 'counter' && total) out.push('non-counter metrics should not have "_total" suffix');
  if (f.type !== 'untyped') {
    if (f.type !== 'histogram' && n.endsWith('_bucket')) out.push('non-histogram metrics should not have "_bucket" suffix');
    if (f.type !== 'histogram' && f.type !== 'summary' && n.endsWith('_count')) out.push('non-histogram and non-summary metrics should not have "_count" suffix');
    if (f.type !== 'histogram' && f.type !== 'summary' && n.endsWith('_sum')) out.push('non-histogram and non-summary metrics should not have "_sum" suffix');
    if (f.type !== 'histogram' && f.labelNames.has('le')) out.push('non-histogram metrics should not have "le" label');
    if (f.type !== 'summary' && f.labelNames.has('quantile')) out.push('non-summary metrics should not have "quantile" label');
  }
  for (const t of ['counter', 'gauge', 'histogram', 'summary', 'gauge_histogram']) if (has(t)) out.push(`metric name should not include type '${t}'`);
  if (n.includes(':')) out.push("metric names should not contain ':'");
  if (/[a-z][A-Z]/.test(n)) out.push("metric names should be written in 'snake_case' not 'camelCase'");
  if ([...f.labelNames].some((l) => /[a-z][A-Z]/.test(l))) out.push("label names should be written in 'snake_case' not 'camelCase'");
  if ([...f.labelNames].some((l) => !LABEL.test(l))) out.push('invalid label name');
  for (const a of ABBREVIATIONS) if (has(a)) out.push('metric names should not contain abbreviated units');
  return out;
}
