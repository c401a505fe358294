// A service that writes null for a field it has no value for (ASP.NET's default serializer: "links": null,
// "comment": null, "messages": null) is a service that follows the API: the client treats null as absent.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { withoutNulls } from '../../src/service-client/answers.js';
import { fixturePath, runCliAsync } from '../helpers/fixtures.js';
import { startStandIn } from '../helpers/stand-in-service.js';

test('withoutNulls leaves out null members at every depth, keeps array items and other values', () => {
  expect(withoutNulls({ id: '1', links: null, a: [{ m: null, n: 0 }, null], s: '' })).toEqual({ id: '1', a: [{ n: 0 }, null], s: '' });
});

test('sign against a service that writes null for the fields it has no value for', async () => {
  const service = await startStandIn({
    created: (real) => ({ id: real.id, comment: null, links: null }),
    status: (real) => ({
      ...real,
      comment: null,
      createdAt: null,
      assemblies: (real.assemblies as Record<string, unknown>[]).map((a) => ({ ...a, messages: null })),
    }),
    list: (ids) => ids.map((id) => ({ id, comment: null, createdAt: null, processingFinished: null, fileCount: null })),
  });
  try {
    const work = mkdtempSync(join(tmpdir(), 'signgate-nulls-'));
    const env = { SIGNGATE_ACCESS_TOKEN: 'sgt_test', SIGNGATE_CACHE_DIR: join(work, 'cache') };
    const r = await runCliAsync(
      [
        'sign',
        fixturePath('addin/SampleAddin.dll'),
        '--vendor',
        'Contoso',
        '--key',
        fixturePath('test-keys/12345_public.snk'),
        '--base-url',
        service.baseUrl,
        '--destination-path',
        join(work, 'out'),
        '--poll-interval',
        '20',
      ],
      { env },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('1 signed and verified, 0 failed');
    const list = await runCliAsync(['jobs', 'list', '--base-url', service.baseUrl], { env });
    expect(list.status, list.stderr).toBe(0);
  } finally {
    await service.close();
  }
});
