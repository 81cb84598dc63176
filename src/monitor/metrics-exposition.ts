/**
 * A small builder for the Prometheus text exposition format (version 0.0.4) that refuses, when a
 * family is added, the names and types `promtool check metrics` warns about:
 *
 * - names and label names match the format's grammar, with no ':' (reserved for recording rules)
 *   and no camelCase;
 * - a counter's name ends in `_total`, no other type's does; no gauge ends in `_count`, `_sum` or
 *   `_bucket`, none has an `le` or `quantile` label;
 * - units are base units spelled out (`_seconds`, `_bytes`), never abbreviated (`_ms`, `_mb`) or
 *   scaled (`_milliseconds`, `_megabytes`): rates are left to the scraper (`rate(x_total[1m])`);
 * - every family has HELP and TYPE, is added once, and has no two samples with the same labels.
 *
 * A mistake here is a programming error, so it throws (the metric text is built on each scrape,
 * and a test renders every family). test/crawl/promlint.ts re-checks the rendered text the way
 * promtool does, and test/crawl/metrics-promtool.test.ts runs promtool itself on a live crawl.
 */

export type MetricType = 'counter' | 'gauge';
export type Labels = Readonly<Record<string, string>>;

export interface Sample {
  labels?: Labels;
  value: number;
}

const NAME_RE = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const LABEL_RE = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const CAMEL_RE = /[a-z][A-Z]/;
/** Name parts that are an abbreviated unit (promtool: "should not contain abbreviated units"). */
const ABBREVIATED_UNITS = ['s', 'ms', 'us', 'ns', 'sec', 'b', 'kb', 'mb', 'gb', 'tb', 'pb', 'm', 'h', 'd'];
/** Name parts that are a unit other than the base unit (promtool: "use base unit"). */
const NON_BASE_UNIT = /^((pico|nano|micro|milli|centi|deci|deca|hecto|kilo|kibi|mega|mibi|giga|gibi|tera|tebi|peta|pebi)(amperes|bytes|celsius|grams|joules|kelvin|meters|metres|seconds|volts|minutes|hours|days|weeks|bits)|minutes|hours|days|weeks|bits|kelvins|fahrenheit|rankine|inches|yards|miles|calories|pounds|ounces)$/;

/** Why `name` (of type `type`, with these label names) breaks the conventions, or null. */
export function namingProblem(name: string, type: MetricType, labelNames: readonly string[] = []): string | null {
  if (!NAME_RE.test(name)) return `"${name}" is not a valid metric name`;
  if (CAMEL_RE.test(name)) return `"${name}" is camelCase, not snake_case`;
  const parts = name.toLowerCase().split('_');
  const abbr = parts.slice(1).find((p) => ABBREVIATED_UNITS.includes(p));
  if (abbr !== undefined) return `"${name}" has the abbreviated unit "${abbr}"`;
  const scaled = parts.find((p) => NON_BASE_UNIT.test(p));
  if (scaled !== undefined) return `"${name}" uses "${scaled}", not a base unit (seconds, bytes)`;
  if (parts.slice(1).some((p) => p === 'counter' || p === 'gauge' || p === 'histogram' || p === 'summary')) return `"${name}" names its type`;
  const total = name.endsWith('_total');
  if (type === 'counter' && !total) return `counter "${name}" must end in _total`;
  if (type !== 'counter' && total) return `${type} "${name}" must not end in _total`;
  if (/_(count|sum|bucket)$/.test(name)) return `"${name}" ends in a suffix reserved for histograms and summaries`;
  for (const l of labelNames) {
    if (!LABEL_RE.test(l) || l.startsWith('__')) return `"${l}" is not a valid label name`;
    if (CAMEL_RE.test(l)) return `label "${l}" is camelCase`;
    if (l === 'le' || l === 'quantile') return `label "${l}" is reserved for histograms and summaries`;
  }
  return null;
}

/** A label value as the text format writes it: backslash, double quote and newline escaped. */
export function escapeLabelValue(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** HELP text escaping: backslash and newline. */
function escapeHelp(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/** A sample value: Go's float formatting for the special values, JavaScript's shortest form otherwise. */
export function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

/** Collects metric families and renders them in the order they were added. */
export class Exposition {
  private readonly lines: string[] = [];
  private readonly names = new Set<string>();

  /** One family with its samples (a family with no sample is rendered as HELP and TYPE only). */
  family(name: string, type: MetricType, help: string, samples: readonly Sample[]): this {
    if (this.names.has(name)) throw new Error(`metric family ${name} added twice`);
    if (help.trim() === '') throw new Error(`metric family ${name} has no help text`);
    const labelNames = new Set<string>();
    for (const s of samples) for (const l of Object.keys(s.labels ?? {})) labelNames.add(l);
    const problem = namingProblem(name, type, [...labelNames]);
    if (problem !== null) throw new Error(`metric ${problem}`);
    this.names.add(name);
    this.lines.push(`# HELP ${name} ${escapeHelp(help)}`, `# TYPE ${name} ${type}`);
    const seen = new Set<string>();
    for (const s of samples) {
      const entries = Object.entries(s.labels ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      const labels = entries.length === 0 ? '' : `{${entries.map(([k, v]) => `${k}="${escapeLabelValue(v)}"`).join(',')}}`;
      if (seen.has(labels)) throw new Error(`metric family ${name} has two samples labelled ${labels || '{}'}`);
      seen.add(labels);
      if (type === 'counter' && !(s.value >= 0)) throw new Error(`counter ${name}${labels} is ${s.value}`);
      this.lines.push(`${name}${labels} ${formatValue(s.value)}`);
    }
    return this;
  }

  counter(name: string, help: string, value: number, labels?: Labels): this {
    return this.family(name, 'counter', help, [{ value, labels }]);
  }

  gauge(name: string, help: string, value: number, labels?: Labels): this {
    return this.family(name, 'gauge', help, [{ value, labels }]);
  }

  /** The exposition text, one line per entry, ending in a newline. */
  text(): string {
    return this.lines.join('\n') + '\n';
  }
}
