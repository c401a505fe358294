// Runs the pre-flight rules over fixture folders, as `signgate check` would.
import { readFileSync } from 'node:fs';
import { basename, relative } from 'node:path';
import { expandInputs } from '../../src/workflows/input-paths.js';
import { parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { publicKeyToken } from '../../src/strongname/key-token.js';
import { auditProduct } from '../../src/audit/audit-product.js';
import type { AuditOptions, AuditReport } from '../../src/audit/model.js';
import { inThisThread, runEngine, type EngineInput, type Runner } from '../../src/engine/index.js';
import { checkProduct } from '../../src/rules/check-product.js';
import type { CheckOptions, CheckResult } from '../../src/rules/rule-runner.js';
import type { CheckSettings, ExpectedKey } from '../../src/rules/types.js';
import { fixturePath, repoRoot } from './fixtures.js';

export function expectedKey(file: string, optionId: number | null = 12345): ExpectedKey {
  const publicKey = parseStrongNameKeyFile(readFileSync(fixturePath(file))).publicKey;
  return { optionId, source: file, publicKey, token: publicKeyToken(publicKey.blob) };
}

export const defaultSettings = (): CheckSettings => ({
  vendor: 'Contoso',
  vendorApi: ['Contoso.*'],
  vendorNamespace: 'Contoso',
  keys: [expectedKey('test-keys/12345_public.snk')],
  maxUploadBytes: 40_000_000,
  root: null,
});

/** Checks files or folders (absolute, or relative to the repository) with the default settings plus overrides. */
export async function checkPaths(paths: string[], settings: Partial<CheckSettings> = {}, options: Omit<CheckOptions, 'settings'> = {}): Promise<CheckResult> {
  const merged = { ...defaultSettings(), ...settings };
  const files = await expandInputs(paths, repoRoot, { netmodules: true });
  const inputs = files.map((f) => ({
    path: f.displayPath,
    uploadName: merged.root ? relative(merged.root, f.absolutePath).split('\\').join('/') : basename(f.absolutePath),
    bytes: readFileSync(f.absolutePath),
    explicit: f.explicit,
  }));
  return runCheck(inputs, { ...options, settings: merged });
}

/**
 * Rule names of every finding, sorted, without the SG801 note: it is on nearly every delay-signed input (such a file
 * loads under neither license until it is signed) and test/rules/load.test.ts checks it on its own.
 */
export const ruleNames = (result: CheckResult) =>
  result.findings
    .filter((f) => f.ruleId !== 'SG801')
    .map((f) => f.rule)
    .sort();

/** Checks inputs already read with the settings given whole: the engine with the check's product, in this thread or on `runner`. */
export function runCheck(inputs: readonly EngineInput[], options: CheckOptions, runner: Runner = inThisThread()): Promise<CheckResult> {
  return runEngine(checkProduct(options), inputs, runner);
}

/** Audits inputs already read with the settings and records given whole, in this thread or on `runner`. */
export function buildAudit(inputs: readonly EngineInput[], options: AuditOptions, runner: Runner = inThisThread()): Promise<AuditReport> {
  return runEngine(auditProduct(options), inputs, runner);
}
