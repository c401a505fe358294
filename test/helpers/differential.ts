// The differential test of the one verdict (src/strongname/well-formed.ts): seeded mutants of the files of
// fixtures/addin go through inspect, check (beside an intact add-in) and the service (one job with the intact add-in,
// on loopback), and their verdicts must agree. A case that disagrees is returned with its seed, so that it can be
// replayed: mutate(landmarks(<file>), <seed>).
import { readFileSync } from 'node:fs';
import { isSignGateError } from '../../src/core/errors.js';
import { runEngine, inThisThread } from '../../src/engine/index.js';
import { checkProduct } from '../../src/rules/check-product.js';
import type { CheckResult } from '../../src/rules/rule-runner.js';
import { decideSigning, SERVICE_SEVERITIES } from '../../src/server/domain/signing-decision.js';
import { organizationSettings } from '../../src/server/jobs/process-job.js';
import type { ServerConfig } from '../../src/server/server-config.js';
import { inspectAssembly } from '../../src/strongname/assembly-info.js';
import { defaultSettings } from './check.js';
import { fixturePath } from './fixtures.js';
import { landmarks, mutate, type Landmarks, type Mutant } from './mutator.js';
import { api, uploadForm, waitFinished, type TestServer } from './server.js';

/** The files of fixtures/addin that are mutated, by their name in the upload. */
export const MUTATED = [
  'SampleAddin.dll',
  'SampleAddin.Helpers.dll',
  'SampleAddin.XmlSerializers.dll',
  'Interop.SampleCom.dll',
  'de/SampleAddin.resources.dll',
  'ThirdParty.Json.dll',
  'Contoso.AddinApi.dll',
] as const;

/** The intact add-in beside every mutant: an API program of its own, signed whatever the mutant is. */
export const INTACT = 'AddinTool.exe';

export interface Verdicts {
  readonly source: string;
  readonly mutant: Mutant;
  /** inspect's error code, or null when it reads the file. */
  readonly inspect: string | null;
  /** check's SG001 code on the mutant (the CLI's settings), or null when it has none. */
  readonly check: string | null;
  /** The intact file's outcome in that check. */
  readonly intactChecked: string;
  /** The service's state of the mutant and the SG001 code of its messages, or null. */
  readonly service?: { readonly state: string; readonly sg001: string | null; readonly intact: string; readonly expected: string };
  /** A stage that threw (it must not): what it threw. */
  readonly crash?: string;
}

const sg001 = (result: CheckResult, path: string): string | null => {
  const finding = result.files.find((f) => f.path === path)?.findings.find((f) => f.ruleId === 'SG001');
  return finding ? String(finding.data?.code) : null;
};

/** The intact file's bytes and the landmarks of every mutated file, read once. */
export function differentialSources(): { intact: Uint8Array; sources: Map<string, Landmarks> } {
  return {
    intact: readFileSync(fixturePath(`addin/${INTACT}`)),
    sources: new Map(MUTATED.map((name) => [name, landmarks(readFileSync(fixturePath(`addin/${name}`)))])),
  };
}

/** The mutant of `seed`, of the file that seed picks. */
export function mutantOf(sources: ReadonlyMap<string, Landmarks>, seed: number): { source: string; mutant: Mutant } {
  const source = MUTATED[seed % MUTATED.length]!;
  return { source, mutant: mutate(sources.get(source)!, seed) };
}

/** inspect and check (in this process, as the CLI runs them) on one mutant beside the intact file. */
export async function judgeHere(source: string, mutant: Mutant, intact: Uint8Array, config: ServerConfig): Promise<Verdicts> {
  try {
    const info = inspectAssembly(mutant.bytes, source);
    const inputs = [
      { path: source, uploadName: source, bytes: mutant.bytes, explicit: true },
      { path: INTACT, uploadName: INTACT, bytes: intact, explicit: true },
    ];
    const check = await runEngine(checkProduct({ settings: defaultSettings() }), inputs, inThisThread());
    // The service's own check, for the decision it must come to.
    const org = config.organizations.get('sandbox')!;
    const served = await runEngine(checkProduct({ settings: organizationSettings(config, org), severities: SERVICE_SEVERITIES }), inputs, inThisThread());
    const decision = decideSigning(served.files.find((f) => f.path === source)!, org, new Map());
    return {
      source,
      mutant,
      inspect: info.error?.code ?? null,
      check: sg001(check, source),
      intactChecked: check.files.find((f) => f.path === INTACT)!.outcome,
      service: { state: '', sg001: null, intact: '', expected: decision.action === 'error' ? 'Error' : 'Signed' },
    };
  } catch (error) {
    return { source, mutant, inspect: null, check: null, intactChecked: '', crash: isSignGateError(error) ? `${error.code}: ${error.message}` : String(error) };
  }
}

/** The service's verdict on one mutant, uploaded in one job with the intact file. */
export async function judgeInService(server: TestServer, token: string, judged: Verdicts, intact: Uint8Array, finishMs = 10_000): Promise<Verdicts> {
  if (judged.crash) return judged;
  const created = await api(server, '/assemblies', token, {
    method: 'POST',
    body: uploadForm([
      { name: judged.source, bytes: judged.mutant.bytes },
      { name: INTACT, bytes: intact },
    ]),
  });
  if (created.status !== 201) return { ...judged, crash: `upload answered ${created.status}: ${await created.text()}` };
  const { id } = (await created.json()) as { id: string };
  // Seconds, never the minutes of a job retried as the service's fault (a caller on a busy machine, which gives the
  // wait longer, asserts from the service's log that no job was retried).
  const status = await waitFinished(server, token, id, finishMs);
  await api(server, `/assemblies/${id}`, token, { method: 'DELETE' });
  const file = status.assemblies.find((a) => a.fileName === judged.source)!;
  const code = /SG001 malformed: (SG_ERR_[A-Z0-9_]+)/.exec(file.messages.map((m) => m.message).join(' '))?.[1] ?? null;
  return {
    ...judged,
    service: {
      state: file.fileProcessingState,
      sg001: code,
      intact: status.assemblies.find((a) => a.fileName === INTACT)!.fileProcessingState,
      expected: judged.service!.expected,
    },
  };
}

/** Why the verdicts on a mutant disagree, or nothing when they agree. */
export function disagreement(v: Verdicts): string | undefined {
  const where = `seed ${v.mutant.seed} (${v.source}: ${v.mutant.what})`;
  if (v.crash) return `${where}: ${v.crash}`;
  const problems: string[] = [];
  if (v.inspect !== v.check) problems.push(`inspect ${v.inspect ?? 'reads it'}, check ${v.check ?? 'has no SG001'}`);
  if (v.intactChecked !== 'pass') problems.push(`the intact file is ${v.intactChecked} in check`);
  if (v.service?.state) {
    if (v.service.sg001 !== v.check)
      problems.push(`the service ${v.service.sg001 ? `says SG001 ${v.service.sg001}` : 'has no SG001'}, check ${v.check ?? 'has none'}`);
    if (v.service.state !== v.service.expected) problems.push(`the service ends it ${v.service.state}, the check's decision is ${v.service.expected}`);
    if (v.service.intact !== 'Signed') problems.push(`the service ends the intact file ${v.service.intact}`);
  }
  return problems.length ? `${where}: ${problems.join('; ')}` : undefined;
}

/**
 * Judges `count` mutants from `firstSeed` on: inspect and check in this process, then the service, `inFlight`
 * jobs at a time, each given `finishMs` to finish. Returns every disagreement (with its seed) and what was judged.
 * The first upload that fails stops the others before their next job: nothing of a failed run goes on into the next test.
 */
export async function runDifferential(
  server: TestServer,
  token: string,
  config: ServerConfig,
  count: number,
  firstSeed: number,
  inFlight = 6,
  finishMs = 10_000,
): Promise<{ disagreements: string[]; judged: Verdicts[] }> {
  const { intact, sources } = differentialSources();
  const here: Verdicts[] = [];
  for (let i = 0; i < count; i++) {
    const { source, mutant } = mutantOf(sources, firstSeed + i);
    here.push(await judgeHere(source, mutant, intact, config));
  }
  const judged: Verdicts[] = new Array(here.length);
  let next = 0;
  let failed = false;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < here.length && !failed) {
        const i = next++;
        try {
          judged[i] = await judgeInService(server, token, here[i]!, intact, finishMs);
        } catch (error) {
          failed = true;
          throw error;
        }
      }
    }),
  );
  return { disagreements: judged.flatMap((v) => disagreement(v) ?? []), judged };
}
