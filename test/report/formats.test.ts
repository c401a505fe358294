// The report formats come from one map each: check's (src/report/index.ts) gives the library's ReportFormats,
// `--format`'s choices as `check --help` prints them and the config schema's `format` enum, the same list in the same
// order; the audit's (src/workflows/audit.ts) gives AuditFormats, `audit --format`'s choices and what `-o`'s extension names.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { auditFormatOf } from '../../src/cli/commands/audit-command.js';
import { ReportFormats } from '../../src/report/index.js';
import { AuditFormats, auditFormatOfExtension } from '../../src/workflows/audit.js';
import { repoRoot, runCli } from '../helpers/fixtures.js';

test("the config schema's format enum is the reporters' list", () => {
  const schema = JSON.parse(readFileSync(join(repoRoot, 'schemas', 'config.schema.json'), 'utf8')) as { properties: { format: { enum: string[] } } };
  expect(schema.properties.format.enum).toEqual([...ReportFormats]);
});

/** The choices `signgate <command> --help` prints for --format. */
function helpChoices(command: string): string[] | undefined {
  const help = runCli([command, '--help']);
  expect(help.status).toBe(0);
  // The option's entry: from its line to the next option's (yargs wraps the choices onto lines of their own).
  const entry = /^\s+--format\b[\s\S]*?(?=^\s+(?:-\w, )?--\w)/m.exec(help.stdout)?.[0];
  expect(entry, help.stdout).toBeDefined();
  const choices = /\[choices: ([^\]]+)\]/.exec(entry!.replace(/\s+/g, ' '))?.[1];
  return choices?.split(', ').map((c) => JSON.parse(c) as string);
}

test("check --help offers exactly the reporters' formats", () => {
  expect(helpChoices('check')).toEqual([...ReportFormats]);
});

test("audit --help offers exactly the audit's formats; -o's extension names them, in any case", () => {
  expect(helpChoices('audit')).toEqual([...AuditFormats]);
  const named = Object.fromEntries(['.html', '.HTM', '.md', '.Markdown', '.json', '.txt', ''].map((e) => [e, auditFormatOfExtension(e) ?? null]));
  expect(named).toEqual({ '.html': 'html', '.HTM': 'html', '.md': 'markdown', '.Markdown': 'markdown', '.json': 'json', '.txt': null, '': null });
  expect(auditFormatOf(undefined, 'C:\\Release\\AUDIT.MD')).toBe('markdown');
  expect(() => auditFormatOf('json', 'audit.md')).toThrow(/--format json and -o audit\.md disagree/);
});
