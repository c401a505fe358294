// Differential test over the NuGet corpus (`npm run corpus:nuget`: every distinct *.dll and *.exe in every folder of
// the packages in tools/nuget-corpus/packages.txt: lib/, ref/, build/, tools/, runtimes/ ...; none of them written
// here): identity, signature slot, CorFlags, references, assembly-level attribute types and the strong-name state
// must equal what System.Reflection.Metadata reads and the oracle's own signature verification decides
// (tools/srm-oracle). Needs the corpus and the .NET SDK: without either it skips, except in CI, where it fails.
import { describe, expect, test } from 'vitest';
import { corpusFiles, corpusMissing, runCorpusTests } from '../helpers/nuget-corpus.js';
import { agreeWithSrm } from '../helpers/srm-agreement.js';
import { buildSrmOracle } from '../helpers/srm-oracle.js';

if (!runCorpusTests) console.warn(`skipping the NuGet corpus test: ${corpusMissing}`);

describe.skipIf(!runCorpusTests)('agreement with System.Reflection.Metadata over the NuGet corpus', () => {
  test('every field and every strong-name state agree', { timeout: 20 * 60_000 }, async () => {
    if (corpusMissing) throw new Error(`CI is set but ${corpusMissing}`);
    await buildSrmOracle();
    const files = corpusFiles();
    expect(files.length).toBeGreaterThanOrEqual(2300);
    const agreement = await agreeWithSrm(files);
    console.log(JSON.stringify(agreement.summary, null, 2));
    expect(agreement.disagreements).toEqual([]);
    // The corpus really exercises verification: most widely used packages ship signed assemblies.
    expect(agreement.fullySigned).toBeGreaterThan(1000);
  });
});
