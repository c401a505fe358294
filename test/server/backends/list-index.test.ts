// GET /assemblies from the in-memory index: paging, and the index following uploads and deletes.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fixture } from '../../helpers/fixtures.js';
import { api, startServer, uploadForm, type TestServer } from '../../helpers/server.js';

let server: TestServer;
let token: string;
beforeAll(async () => {
  server = await startServer();
  token = server.token();
});
afterAll(() => server.close());

const list = async (query = '') => (await (await api(server, `/assemblies${query}`, token)).json()) as { id: string; fileCount: number }[];
const upload = async () =>
  (
    (await (
      await api(server, '/assemblies', token, {
        method: 'POST',
        body: uploadForm([{ name: 'FindingAddin.dll', bytes: fixture('findings/passing/FindingAddin.dll') }]),
      })
    ).json()) as { id: string }
  ).id;

describe('GET /assemblies', () => {
  test('follows uploads and deletes, oldest first; offset and limit page through it', async () => {
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(await upload());
    expect((await list()).map((j) => j.id)).toEqual(ids);
    expect((await list('?offset=1&limit=2')).map((j) => j.id)).toEqual(ids.slice(1, 3));
    expect((await list('?offset=4')).map((j) => j.id)).toEqual(ids.slice(4));
    expect((await api(server, `/assemblies/${ids[2]}`, token, { method: 'DELETE' })).status).toBe(204);
    expect((await list()).map((j) => j.id)).toEqual([...ids.slice(0, 2), ...ids.slice(3)]);
    ids.push(await upload());
    expect((await list()).at(-1)!.id).toBe(ids.at(-1));
    expect((await list()).every((j) => j.fileCount === 1)).toBe(true);
  });

  test('bad paging parameters: 400', async () => {
    expect((await api(server, '/assemblies?limit=0', token)).status).toBe(400);
    expect((await api(server, '/assemblies?offset=-1', token)).status).toBe(400);
  });

  test('after a restart the index is built again from the job files', async () => {
    const before = (await list()).map((j) => j.id);
    const port = Number(new URL(server.baseUrl).port);
    await server.close();
    server = await startServer({ dataDir: server.dataDir, port });
    token = server.token();
    expect((await list()).map((j) => j.id)).toEqual(before);
  });
});
