// The order test files start in: the slowest first, from the durations CI's legs print (a fresh clone has no
// vitest cache of durations, and vitest would start the largest files first, which are not the slowest). A leg then
// ends about when its slowest file does, instead of waiting for one that started last. Files not named keep
// vitest's own order, after these.
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Slowest first, per leg (seconds in a rehearsal of the whole CI on a 2-core machine). */
const SLOWEST = [
  // heavy
  'test/package/nuget.test.ts', // 929
  'test/record/record-large.test.ts', // 720
  'test/corpus/mono-corpus.test.ts', // 434
  'test/strongname/well-formed-differential-heavy.test.ts', // 327
  'test/package/consumer.test.ts', // 233
  'test/corpus/nuget-fix.test.ts', // 226
  'test/server/jobs/pkcs11-process.test.ts', // 197
  'test/corpus/authenticode-corpus.test.ts', // 168
  'test/package/wine.test.ts', // 150
  'test/record/record-over-heap.test.ts', // 147
  'test/package/sea.test.ts', // 141
  // sdk
  'test/sdk/msbuild.test.ts', // 337
  'test/sdk/ship-release.test.ts', // 137
  'test/sdk/msbuild-keys.test.ts', // 131
  'test/sdk/msbuild-fix.test.ts', // 112
  'test/sdk/msbuild-solution.test.ts', // 107
  'test/sdk/sdk-rebuild.test.ts', // 99
  // npm test
  'test/strongname/well-formed-differential.test.ts', // 52
  'test/audit/audit-html.test.ts', // 34
  'test/cli/archive.test.ts', // 26
  'test/cli/fix.test.ts', // 25
  'test/docs/runnable.test.ts', // 23
  'test/cli/check-pool.test.ts', // 22
  'test/cli/check.test.ts', // 21
  // service
  'test/client/sign.test.ts', // 59
  'test/server/record-key-deployment.test.ts', // 42
  'test/secrets/leaks.test.ts', // 40
  'test/server/record/signature-record.test.ts', // 35
  'test/client/hostile-service.test.ts', // 34
  'test/server/jobs/pkcs11.test.ts', // 30
  'test/server/backends/postgres-cluster.test.ts', // 25
  'test/cli/readme-service.test.ts', // 17
  'test/server/previous-release.test.ts', // 12
];

export default class LongFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification) => {
      const at = SLOWEST.findIndex((name) => file.moduleId.replaceAll('\\', '/').endsWith(name));
      return at === -1 ? SLOWEST.length : at;
    };
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
