// `signgate sign` runs at once on one job ledger keep the record pin as runs one after the other would: against an
// honest service every run passes and every job is in the ledger; against a fork of the service (its record key, its
// address, another history) or another service at its address on first use (another key), every run that talked to
// the one whose checkpoint did not become the pin is refused with the error a later run would get, nothing of its job
// written, and the pin is the other's. Every run reads the pin before any keeps a checkpoint (the proxy holds the
// downloads until each run asked for its own), so the overlap that split the pin happens every time.
// The 8-run versions are in ledger-parallel-sign-eight.test.ts (the heavy leg).
import { dataDirOnly } from '../helpers/database.js';
import { parallelAgainstFork, parallelAgainstHonest, parallelWork } from '../helpers/parallel-sign.js';

dataDirOnly("3 runs at once against one service: all pass, 3 jobs in the ledger, the pin is the service's latest checkpoint", async () => {
  await parallelAgainstHonest(parallelWork(), 3);
});

dataDirOnly('a run against a fork (same record key, another history) and one against the service, at once: one is refused', async () => {
  await parallelAgainstFork(parallelWork(), 1, true);
});

dataDirOnly('first use, a run against each of two services with other record keys at one address, at once: one is refused', async () => {
  await parallelAgainstFork(parallelWork(), 1, false);
});
