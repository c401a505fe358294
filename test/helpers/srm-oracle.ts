// tools/srm-oracle, System.Reflection.Metadata's reading of assemblies: built once per test run, then asked to
// compare an assembly with its rewritten copy (`--compare`) or to describe files.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from './fixtures.js';
import { buildOnce } from '../sdk/dotnet.js';

export const ORACLE_DIR = join(repoRoot, 'tools', 'srm-oracle');
export const ORACLE_DLL = join(ORACLE_DIR, 'bin', 'Release', 'srm-oracle.dll');

/** Builds the oracle (Release); throws with the build log when the build fails. */
export async function buildSrmOracle(): Promise<void> {
  const build = await buildOnce(ORACLE_DIR);
  if (build.status !== 0) throw new Error(`building tools/srm-oracle failed:\n${build.output}`);
}

/** What SRM finds between an assembly and its rewritten copy. */
export interface SrmComparison {
  readonly original: string;
  readonly rewritten: string;
  readonly error: string | null;
  /** The table rows were laid out anew (the #Blob index widened). */
  readonly relaid?: boolean;
  /** The rewritten file's full assembly name and its references' full names. */
  readonly identity?: string;
  readonly references?: string[];
  /** The changes fix may make, as found. */
  readonly changes?: string[];
  /** Everything else that differs: must be empty. */
  readonly differences?: string[];
}

/** Runs a .NET or Mono tool that reads lines on stdin and writes one JSON record a line; throws on a non-zero exit. */
export function runJsonLines<T>(command: string, args: readonly string[], lines: readonly string[]): Promise<T[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { ...process.env, DOTNET_CLI_TELEMETRY_OPTOUT: '1', DOTNET_NOLOGO: '1' } });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('error', reject);
    child.on('close', (status) => {
      if (status !== 0) return reject(new Error(`${command} ${args.join(' ')} exited with ${status}: ${err}`));
      resolve(
        out
          .trimEnd()
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as T),
      );
    });
    child.stdin.end(lines.join('\n') + '\n');
  });
}

function runOracle<T>(args: readonly string[], lines: readonly string[]): Promise<T[]> {
  return runJsonLines<T>('dotnet', [ORACLE_DLL, ...args], lines);
}

/** Compares each [original, rewritten] pair as SRM reads them, in one run of the oracle. */
export function srmCompare(pairs: readonly (readonly [string, string])[]): Promise<SrmComparison[]> {
  return runOracle<SrmComparison>(
    ['--compare'],
    pairs.map(([a, b]) => `${a}\t${b}`),
  );
}

/** What SRM reads from each file (identity, slot, flags, references, attribute types), one record per path in order. */
export function srmDescribe<T>(files: readonly string[]): Promise<T[]> {
  return runOracle<T>([], files);
}

/** The table layout SRM computes for a file: per present table its id, rows, row size and offset in the metadata. */
export interface SrmTables {
  readonly path: string;
  readonly error: string | null;
  readonly tables?: { id: number; rows: number; rowSize: number; offset: number }[];
}

export function srmTables(files: readonly string[]): Promise<SrmTables[]> {
  return runOracle<SrmTables>(['--tables'], files);
}
