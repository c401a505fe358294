// The NuGet corpus (`npm run corpus:nuget`): every distinct lib/ and ref/ assembly of the packages in
// tools/nuget-corpus/packages.txt. Tests over it skip where it (or the .NET SDK) is missing, except in CI.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from './fixtures.js';
import { hasDotnet } from '../sdk/dotnet.js';

export const CORPUS_CACHE = process.env.SIGNGATE_NUGET_CORPUS ?? join(homedir(), '.cache', 'signgate', 'nuget-corpus');
const LIST = join(repoRoot, 'tools', 'nuget-corpus', 'packages.txt');

/** Why the corpus cannot be used, or null when it matches packages.txt. */
function corpusProblem(): string | null {
  const stamp = join(CORPUS_CACHE, 'corpus.json');
  if (!existsSync(stamp) || !existsSync(join(CORPUS_CACHE, 'assemblies.txt'))) return `no NuGet corpus in ${CORPUS_CACHE}; run npm run corpus:nuget`;
  const listSha256 = createHash('sha256').update(readFileSync(LIST)).digest('hex');
  const recorded = (JSON.parse(readFileSync(stamp, 'utf8')) as { listSha256?: string }).listSha256;
  return recorded === listSha256 ? null : `the NuGet corpus in ${CORPUS_CACHE} was restored from another packages.txt; run npm run corpus:nuget`;
}

/** Why a corpus test cannot run here (no corpus, no SDK), or null. */
export const corpusMissing: string | null = hasDotnet ? corpusProblem() : 'the .NET SDK (dotnet) is not installed';
/** Run the corpus tests: where the corpus is, and always in CI (where a missing corpus fails them). */
export const runCorpusTests = corpusMissing === null || Boolean(process.env.CI);

/** The corpus assemblies, one path each. */
export function corpusFiles(): string[] {
  return readFileSync(join(CORPUS_CACHE, 'assemblies.txt'), 'utf8').split('\n').filter(Boolean);
}
