// The PromQL of docs/deploy.md's Grafana section: every query line of its ```promql blocks parses with Prometheus's
// own PromQL grammar (@prometheus-io/lezer-promql, from the Prometheus repository), and every series it selects is
// one the service serves at /metrics (a histogram as its _bucket, _sum and _count series), or Prometheus's `up`.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parser } from '@prometheus-io/lezer-promql';
import { expect, test } from 'vitest';
import { buildServer } from '../../src/server/http/app.js';
import { repoRoot } from '../helpers/fixtures.js';
import { fences } from '../helpers/markdown.js';
import { readExposition } from '../helpers/prometheus.js';
import { sandboxConfig } from '../helpers/server.js';

/** The query lines of the ```promql blocks of a Markdown file (a line starting with # is the query's title). */
function queries(file: string): { line: number; query: string }[] {
  const lines = readFileSync(join(repoRoot, file), 'utf8').split('\n');
  return fences(lines)
    .filter((f) => f.info === 'promql')
    .flatMap((f) => lines.slice(f.open + 1, f.close).map((query, i) => ({ line: f.open + 2 + i, query })))
    .filter(({ query }) => query.trim() !== '' && !query.startsWith('#'));
}

/** Every series name a query selects, and whether the grammar found an error in it. */
function read(query: string): { names: string[]; error: boolean } {
  const tree = parser.parse(query);
  const names: string[] = [];
  let error = false;
  const cursor = tree.cursor();
  do {
    if (cursor.type.isError) error = true;
    if (cursor.name === 'VectorSelector') {
      const selector = cursor.node.getChild('Identifier');
      if (selector) names.push(query.slice(selector.from, selector.to));
    }
  } while (cursor.next());
  return { names, error };
}

test('the grammar finds an error where there is one, and the names a query selects', () => {
  expect(read('sum(rate(signgate_jobs_finished_total[5m]) by').error).toBe(true);
  expect(read('histogram_quantile(0.95, sum by (le) (rate(a_bucket[5m]))) / max(b)')).toEqual({ names: ['a_bucket', 'b'], error: false });
});

test("every query of docs/deploy.md's Grafana section parses and reads only series the service serves", async () => {
  const found = queries('docs/deploy.md');
  expect(found.length).toBeGreaterThanOrEqual(10);
  const app = await buildServer({ config: sandboxConfig(), dataDir: mkdtempSync(join(tmpdir(), 'signgate-promql-')), metrics: 'route', signingWorkers: 0 });
  let served: Set<string>;
  try {
    const { families } = readExposition((await app.inject({ method: 'GET', url: '/metrics' })).body);
    served = new Set(['up']);
    for (const [name, { type }] of families) {
      served.add(name);
      if (type === 'HISTOGRAM' || type === 'SUMMARY') for (const suffix of ['_bucket', '_sum', '_count']) served.add(`${name}${suffix}`);
    }
  } finally {
    await app.close();
  }
  const problems = found.flatMap(({ line, query }) => {
    const { names, error } = read(query);
    const unknown = names.filter((n) => !served.has(n));
    return [
      ...(error ? [`docs/deploy.md:${line}: PromQL does not parse: ${query}`] : []),
      ...(names.length === 0 ? [`docs/deploy.md:${line}: selects no series: ${query}`] : []),
      ...unknown.map((n) => `docs/deploy.md:${line}: ${n} is not served: ${query}`),
    ];
  });
  expect(problems).toEqual([]);
});
