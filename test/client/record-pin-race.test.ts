// Two checks of record proofs made against the same state of the job ledger, kept one after the other, as two runs
// that overlap keep them: the second keep finds the pin the first saved and checks its checkpoint against it again.
// A checkpoint older than the pin (its status came before the other run saved) is kept back when the service proves
// it a part of the pin; one of a fork (same record key, another history), or a status without a record, is refused as
// a later run would be.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect } from 'vitest';
import { createServiceClient } from '../../src/service-client/client.js';
import { Ledger, recordIdentity } from '../../src/workflows/ledger.js';
import { checkRecordProof, describeRecordCheck } from '../../src/workflows/record-proof.js';
import { dataDirOnly } from '../helpers/database.js';
import { fixture } from '../helpers/fixtures.js';
import { api, startServer, uploadForm, waitFinished, type TestServer } from '../helpers/server.js';

const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** Signs one file on `server`; the finished job's id and its status's signatureRecord (the checkpoint of then). */
async function signedJob(server: TestServer, token: string, name: string): Promise<{ jobId: string; proof: unknown }> {
  const body = uploadForm([{ name, bytes: fixture('findings/passing/FindingAddin.dll') }]);
  const { id } = (await (await api(server, '/assemblies', token, { method: 'POST', body })).json()) as { id: string };
  const status = (await waitFinished(server, token, id)) as unknown as { signatureRecord: unknown };
  return { jobId: id, proof: status.signatureRecord };
}

dataDirOnly('a checkpoint kept after a larger one another run saved meanwhile: kept back when consistent, refused from a fork', async () => {
  const work = mkdtempSync(join(tmpdir(), 'signgate-pin-race-'));
  cleanups.push(() => rmSync(work, { recursive: true, force: true }));
  const server = await startServer({ dataDir: join(work, 'data') });
  cleanups.push(() => server.close());
  const token = server.token();
  const client = createServiceClient({ baseUrl: server.baseUrl, accessToken: token });
  const ledger = new Ledger(join(work, 'cache', 'jobs.json'));
  const check = (job: { jobId: string; proof: unknown }) => checkRecordProof({ client, ledger, baseUrl: server.baseUrl, jobId: job.jobId, proof: job.proof });

  const first = await signedJob(server, token, 'First.dll'); // its checkpoint: 1 entry
  const second = await signedJob(server, token, 'Second.dll'); // 2 entries
  const older = await check(first);
  const newer = await check(second);
  expect([older.offered, newer.offered]).toEqual([true, true]);
  await newer.keep();
  const pin = ledger.recordCheckpoint(recordIdentity(server.baseUrl));
  expect(pin).toMatchObject({ size: 2 });
  // Checked against no pin, kept after the one of 2 entries: the service proves 1 a part of 2, the larger stays.
  await older.keep();
  expect(ledger.recordCheckpoint(recordIdentity(server.baseUrl))).toEqual(pin);
  expect(describeRecordCheck(older, first.jobId, server.baseUrl)).toContain(`pinned on ${pin!.savedAt}`);

  // A status without a record checked against no pin, kept after another run pinned the record: refused as a run
  // after that one would be.
  const bare = new Ledger(join(work, 'cache-bare', 'jobs.json'));
  const without = await checkRecordProof({ client, ledger: bare, baseUrl: server.baseUrl, jobId: first.jobId, proof: undefined });
  expect(without.offered).toBe(false);
  await (await checkRecordProof({ client, ledger: bare, baseUrl: server.baseUrl, jobId: second.jobId, proof: second.proof })).keep();
  await expect(without.keep()).rejects.toThrow(`the status of job ${first.jobId} carries no signature record, but this service showed one (record key`);

  // A fork: the same record key, another history, at the same address (the service stopped, the fork started there),
  // met on first use by two runs of another ledger.
  const fresh = new Ledger(join(work, 'cache-2', 'jobs.json'));
  const third = await signedJob(server, token, 'Third.dll'); // 3 entries here
  const racing = await checkRecordProof({ client, ledger: fresh, baseUrl: server.baseUrl, jobId: third.jobId, proof: third.proof });
  const forkDir = join(work, 'fork');
  mkdirSync(forkDir, { mode: 0o700 });
  for (const name of ['record-key.pem', 'record-key.pub']) copyFileSync(join(server.dataDir, name), join(forkDir, name));
  const port = Number(new URL(server.baseUrl).port);
  await server.close();
  const fork = await startServer({ dataDir: forkDir, port });
  cleanups.push(() => fork.close());
  const forkToken = fork.token();
  const forkClient = createServiceClient({ baseUrl: fork.baseUrl, accessToken: forkToken });
  const forked: { jobId: string; proof: unknown }[] = [];
  for (const name of ['A.dll', 'B.dll', 'C.dll']) forked.push(await signedJob(fork, forkToken, name));
  // Checked against no pin, as `racing` was, before `racing` keeps its checkpoint.
  const fromFork = await checkRecordProof({ client: forkClient, ledger: fresh, baseUrl: fork.baseUrl, jobId: forked[2]!.jobId, proof: forked[2]!.proof });
  expect(fromFork.offered).toBe(true);
  // `racing` keeps first (its service's answers are not needed again).
  await racing.keep();
  const kept = fresh.recordCheckpoint(recordIdentity(server.baseUrl));
  expect(kept).toMatchObject({ size: 3 });
  // Same size, another root: refused as a run after `racing` would be, the pin kept.
  const refusal = await fromFork.keep().then(
    () => undefined,
    (error: unknown) => error as Error & { code: string },
  );
  expect(refusal?.code).toBe('SG_ERR_RECORD_PROOF');
  expect(refusal?.message).toContain(`the service's signature record of 3 entries has the root`);
  expect(refusal?.message).toContain(
    `not the ${kept!.root} it showed on ${kept!.savedAt}: its record was rewritten; nothing of job ${forked[2]!.jobId} was written`,
  );
  expect(fresh.recordCheckpoint(recordIdentity(server.baseUrl))).toEqual(kept);
});
