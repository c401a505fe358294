// 8 `signgate sign` runs at once on one job ledger (the heavy leg; ledger-parallel-sign.test.ts has 2- and 3-run
// versions in the service leg): against an honest service all 8 pass and the ledger holds the 8 jobs; against a fork
// of it (4 runs each side, the same record key at one address) every run of the side whose checkpoint did not become
// the pin is refused with a sequential run's error, and the pin is the other side's.
import { dataDirOnly } from '../helpers/database.js';
import { parallelAgainstFork, parallelAgainstHonest, parallelWork } from '../helpers/parallel-sign.js';

dataDirOnly("8 runs at once against one service: all pass, 8 jobs in the ledger, the pin is the service's latest checkpoint", async () => {
  await parallelAgainstHonest(parallelWork(), 8);
});

dataDirOnly('8 runs at once, 4 against a fork (same record key, another history) and 4 against the service: one side is refused', async () => {
  await parallelAgainstFork(parallelWork(), 4, true);
});
