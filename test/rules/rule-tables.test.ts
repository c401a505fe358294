// Every check rule module of src/rules/ (sgNNN-*.ts) has its table of valid and invalid cases:
// test/rules/<the module's base name>.test.ts, which imports that module and runs it through ruleTable
// (test/helpers/rule-table.ts), so a new rule without a table fails here. The SG7xx modules are the release audit's
// (`auditRules`: no check function of their own, src/audit decides where each applies) and are tested by the audit's
// tests (test/audit/, test/authenticode/audit-authenticode.test.ts); they need no table, but each must be an audit
// rule of the registry, so that a check rule cannot go without a table by being numbered 7xx.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, test } from 'vitest';
import { auditRules, rules } from '../../src/rules/index.js';
import type { AuditRule, Rule } from '../../src/rules/types.js';
import { repoRoot } from '../helpers/fixtures.js';
import { moduleSpecifiers } from '../helpers/imports.js';

const RULE_MODULE = /^sg\d{3}-.*\.ts$/;
const TABLE = /^sg\d{3}-.*\.test\.ts$/;
const rulesDir = join(repoRoot, 'src', 'rules');
const tablesDir = join(repoRoot, 'test', 'rules');

const modules = await Promise.all(
  readdirSync(rulesDir)
    .filter((f) => RULE_MODULE.test(f))
    .sort()
    .map(async (file) => {
      const rule = (await import(pathToFileURL(join(rulesDir, file)).href)).default as Rule | AuditRule;
      return { file, base: file.replace(/\.ts$/, ''), rule };
    }),
);
const checkRules = rules as readonly Rule[];
const audit = auditRules as readonly AuditRule[];
const checkModules = modules.filter((m) => checkRules.includes(m.rule as Rule));

describe('the rule modules and the registry', () => {
  test('there are rule modules, and each is named sgNNN-<its name>.ts after the rule it exports', () => {
    expect(modules.length).toBeGreaterThan(0);
    for (const { file, rule } of modules) expect(file).toBe(`${rule.id.toLowerCase()}-${rule.name}.ts`);
  });

  test('each module is a check rule or an audit rule of the registry, and each rule of the registry is a module', () => {
    const unregistered = modules.filter((m) => !checkRules.includes(m.rule as Rule) && !audit.includes(m.rule as AuditRule)).map((m) => m.file);
    expect(unregistered).toEqual([]);
    expect(checkModules.map((m) => m.rule)).toEqual(checkRules);
    expect(modules.length).toBe(checkRules.length + audit.length);
  });

  test('the modules without a table are exactly the SG7xx audit rules', () => {
    const withoutTable = modules.filter((m) => !checkModules.includes(m));
    expect(withoutTable.map((m) => m.rule.id).every((id) => /^SG7\d\d$/.test(id))).toBe(true);
    expect(withoutTable.map((m) => m.rule)).toEqual(audit);
    expect(checkModules.some((m) => /^SG7/.test(m.rule.id))).toBe(false);
  });
});

describe('each check rule has its table in test/rules/', () => {
  test.each(checkModules.map((m) => [m.rule.id, m] as const))('%s', (_id, { base }) => {
    const path = join(tablesDir, `${base}.test.ts`);
    expect(existsSync(path), `test/rules/${base}.test.ts is missing: give src/rules/${base}.ts a table of valid and invalid cases`).toBe(true);
    const text = readFileSync(path, 'utf8');
    const specifiers = moduleSpecifiers(text);
    expect(specifiers).toContain(`../../src/rules/${base}.js`);
    expect(specifiers).toContain('../helpers/rule-table.js');
    expect(text).toMatch(/\bruleTable\(rule, \{/);
    expect(text).toMatch(/\bvalid: \[/);
    expect(text).toMatch(/\binvalid: \[/);
  });

  test('no table without its rule module (a renamed or retired rule)', () => {
    const tables = readdirSync(tablesDir)
      .filter((f) => TABLE.test(f))
      .map((f) => f.replace(/\.test\.ts$/, ''));
    expect(tables.filter((t) => !checkModules.some((m) => m.base === t))).toEqual([]);
  });
});
