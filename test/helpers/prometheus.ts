// A service's /metrics read as a Prometheus server reads it: parsed by parse-prometheus-text-format (a port of the
// Prometheus Python client's parser), which throws on a line that is not of the text format. That parser folds a
// histogram with labels into one set of buckets, so the samples are read a second time with each histogram as the
// series Prometheus stores it as (<name>_bucket, <name>_sum, <name>_count, each with its labels).
import parsePrometheusTextFormat from 'parse-prometheus-text-format';

interface Family {
  name: string;
  help: string;
  type: string;
  metrics: { value?: string; labels?: Record<string, string> }[];
}

export interface Scrape {
  /** The exposition as served. */
  readonly text: string;
  /** The content type it was served with. */
  readonly contentType: string;
  /** Each metric family by name: its type (COUNTER, GAUGE, HISTOGRAM, …) and help. */
  readonly families: ReadonlyMap<string, { type: string; help: string }>;
  /** Every sample of a series name (a histogram's as `_bucket`, `_sum` and `_count`), with its labels. */
  samples(name: string): { value: number; labels: Record<string, string> }[];
  /** The value of the one sample of `name` whose labels include `labels`; throws when there is not exactly one. */
  value(name: string, labels?: Record<string, string>): number;
}

const parse = parsePrometheusTextFormat as (text: string) => Family[];

/** Parses an exposition in the Prometheus text format. */
export function readExposition(text: string, contentType = 'text/plain; version=0.0.4'): Scrape {
  const families = new Map(parse(text).map((f) => [f.name, { type: f.type, help: f.help }]));
  const series = parse(text.replace(/^# TYPE (\S+) (histogram|summary)$/gm, '# TYPE $1 untyped'));
  const samples = (name: string) =>
    series.filter((f) => f.name === name).flatMap((f) => f.metrics.map((m) => ({ value: Number(m.value), labels: m.labels ?? {} })));
  return {
    text,
    contentType,
    families,
    samples,
    value(name, labels = {}) {
      const found = samples(name).filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v));
      const shown = text
        .split('\n')
        .filter((l) => l.startsWith(name))
        .join('\n');
      if (found.length !== 1) throw new Error(`${found.length} samples of ${name} with ${JSON.stringify(labels)}:\n${shown}`);
      return found[0]!.value;
    },
  };
}

/** GET `url` (a /metrics address) and parse it; throws unless it answers 200. */
export async function scrape(url: string): Promise<Scrape> {
  const response = await fetch(url);
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}: ${text.slice(0, 500)}`);
  return readExposition(text, response.headers.get('content-type') ?? '');
}
