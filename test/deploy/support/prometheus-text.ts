/** One sample line of the Prometheus text format. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** What a /metrics page declares and holds. */
export interface Exposition {
  /** `# TYPE` declarations: metric family → counter, gauge, histogram, summary, untyped. */
  types: Map<string, string>;
  samples: Sample[];
}

const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL_PAIR = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Parses the Prometheus text exposition format (what prom-client renders). */
export function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)/.exec(line);
    if (type) {
      types.set(type[1]!, type[2]!);
      continue;
    }
    if (line.startsWith('#') || line.trim() === '') continue;
    const match = SAMPLE_LINE.exec(line);
    if (!match) throw new Error(`unreadable metrics line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(LABEL_PAIR)) labels[pair[1]!] = pair[2]!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return { types, samples };
}

/**
 * The series names a page can answer queries for: a histogram `h` is queried as `h_bucket`,
 * `h_sum` and `h_count` (never `h` itself), a summary as `s`, `s_sum` and `s_count`.
 */
export function queryableNames(exposition: Exposition): Set<string> {
  const names = new Set<string>();
  for (const [family, type] of exposition.types) {
    if (type === 'histogram') {
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(family + suffix);
    } else if (type === 'summary') {
      for (const suffix of ['', '_sum', '_count']) names.add(family + suffix);
    } else {
      names.add(family);
    }
  }
  for (const sample of exposition.samples) names.add(sample.name);
  return names;
}

/** The value of the one sample of `name` (with `labels` among its labels). */
export function sampleValue(
  exposition: Exposition,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const matching = exposition.samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  if (matching.length > 1) throw new Error(`${name} has ${matching.length} matching samples`);
  return matching[0]?.value;
}
