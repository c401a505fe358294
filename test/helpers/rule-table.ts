// One rule's table of valid and invalid cases, in the spirit of ESLint's RuleTester: each case is checked by the real
// engine with the check's product (checkPaths, runCheck), and only the findings of the rule under test are compared.
// A valid case must leave the rule silent; an invalid case must give exactly the reports it lists, in the engine's
// order (file, offset, rule id), each with the rule's id, its severity, a part of its message and the file it names.
import { describe, expect, test } from 'vitest';
import type { Finding, Severity, SeveritySetting } from '../../src/core/diagnostic.js';
import type { EngineInput } from '../../src/engine/index.js';
import { rules } from '../../src/rules/index.js';
import type { CheckSettings, Rule } from '../../src/rules/types.js';
import { checkPaths, defaultSettings, runCheck } from './check.js';

export interface RuleCase {
  /** What the case shows, as the test's name. */
  readonly name: string;
  /** Files or folders (relative to the repository, or absolute), expanded and read as `signgate check` does. */
  readonly paths?: readonly string[];
  /** Or inputs already read (bytes made in the test), checked with the settings given. */
  readonly inputs?: readonly EngineInput[];
  /** Over the default settings of test/helpers/check.ts (vendor Contoso, option 12345's public key). */
  readonly settings?: Partial<CheckSettings>;
  /** Severity overrides; a rule that is off by default is turned on at its default severity unless this says otherwise. */
  readonly severities?: Readonly<Record<string, SeveritySetting>>;
}

export interface ExpectedReport {
  /** The rule's id: the table's rule (a report of another rule never counts). */
  readonly ruleId: string;
  readonly severity: Severity;
  /** A part of the message (a string it contains), or a pattern it matches. */
  readonly message: string | RegExp;
  /** The file the finding names, as displayed (a path relative to the repository, or absolute); null for the set. */
  readonly file: string | null;
  /** Optionally, a part of the hint or a pattern it matches. */
  readonly hint?: string | RegExp;
  /** Optionally, facts the finding's data must hold (a subset). */
  readonly data?: Readonly<Record<string, unknown>>;
}

export interface InvalidCase extends RuleCase {
  /** Every report the rule must make on this input, in the engine's order. */
  readonly reports: readonly ExpectedReport[];
}

export interface RuleTable {
  readonly valid: readonly RuleCase[];
  readonly invalid: readonly InvalidCase[];
}

const text = (part: string | RegExp) => (typeof part === 'string' ? expect.stringContaining(part) : expect.stringMatching(part));

/** The findings of `rule` when the engine checks the case's input. */
export async function findingsOfRule(rule: Rule, c: RuleCase): Promise<Finding[]> {
  if ((c.paths === undefined) === (c.inputs === undefined)) throw new Error(`case "${c.name}": give paths or inputs, one of them`);
  const severities = { ...(rule.enabledByDefault === false ? { [rule.id]: rule.defaultSeverity } : {}), ...c.severities };
  const result = c.paths
    ? await checkPaths([...c.paths], c.settings ?? {}, { severities })
    : await runCheck(c.inputs!, { settings: { ...defaultSettings(), ...c.settings }, severities });
  return result.findings.filter((f) => f.ruleId === rule.id);
}

/** Registers one describe block for `rule`: its place in the registry, then a test per valid and per invalid case. */
export function ruleTable(rule: Rule, table: RuleTable): void {
  describe(`${rule.id} ${rule.name}`, () => {
    test('is a check rule of the registry, with at least one valid and one invalid case, every report its own', () => {
      expect(rules as readonly Rule[]).toContain(rule);
      expect(table.valid.length).toBeGreaterThan(0);
      expect(table.invalid.length).toBeGreaterThan(0);
      for (const c of table.invalid) {
        expect(c.reports.length, c.name).toBeGreaterThan(0);
        for (const r of c.reports) expect(r.ruleId, c.name).toBe(rule.id);
      }
      const names = [...table.valid, ...table.invalid].map((c) => c.name);
      expect(new Set(names).size).toBe(names.length);
    });

    describe('valid: the rule reports nothing', () => {
      test.each(table.valid.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
        expect(await findingsOfRule(rule, c)).toEqual([]);
      });
    });

    describe('invalid: the rule reports what the case lists', () => {
      test.each(table.invalid.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
        const found = await findingsOfRule(rule, c);
        const shown = found.map((f) => `${f.severity} ${f.file}: ${f.message}`).join('\n');
        expect(found.length, shown).toBe(c.reports.length);
        expect(found).toMatchObject(
          c.reports.map((r) => ({
            ruleId: r.ruleId,
            rule: rule.name,
            severity: r.severity,
            file: r.file,
            message: text(r.message),
            ...(r.hint !== undefined ? { hint: text(r.hint) } : {}),
            ...(r.data !== undefined ? { data: expect.objectContaining(r.data) } : {}),
          })),
        );
      });
    });
  });
}
