// Requests that race each other on one job.
import { beforeAll, describe, expect, test } from 'vitest';
import { fixture } from '../../helpers/fixtures.js';
import { api, uploadForm, waitFinished, type TestServer } from '../../helpers/server.js';
import { sharedServer } from '../../helpers/shared-server.js';

const shared = sharedServer();
let server: TestServer;
let token: string;
beforeAll(() => {
  server = shared.server();
  token = shared.token();
});

describe('concurrent deletes', () => {
  test.each([
    ['a finished job', true],
    ['a job being processed', false],
  ])('eight DELETEs of %s at once: exactly one 204, seven 404', async (_what, waitForIt) => {
    for (let round = 0; round < 5; round++) {
      const files = Array.from({ length: waitForIt ? 1 : 20 }, (_, i) => ({ name: `F${i}.dll`, bytes: fixture('findings/passing/FindingAddin.dll') }));
      const { id } = await (await api(server, '/assemblies', token, { method: 'POST', body: uploadForm(files) })).json();
      if (waitForIt) await waitFinished(server, token, id);
      const statuses = (await Promise.all(Array.from({ length: 8 }, () => api(server, `/assemblies/${id}`, token, { method: 'DELETE' })))).map((r) => r.status);
      expect(statuses.sort()).toEqual([204, 404, 404, 404, 404, 404, 404, 404]);
    }
    expect(await (await api(server, '/assemblies', token)).json()).toEqual([]);
  });
});
