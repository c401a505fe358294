// Check's report formats come from one map (src/report/index.ts): the library's ReportFormats, `--format`'s choices
// as `check --help` prints them and the config schema's `format` enum are the same list, in the same order.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { ReportFormats } from '../../src/report/index.js';
import { repoRoot, runCli } from '../helpers/fixtures.js';

test("the config schema's format enum is the reporters' list", () => {
  const schema = JSON.parse(readFileSync(join(repoRoot, 'schemas', 'config.schema.json'), 'utf8')) as { properties: { format: { enum: string[] } } };
  expect(schema.properties.format.enum).toEqual([...ReportFormats]);
});

test("check --help offers exactly the reporters' formats", () => {
  const help = runCli(['check', '--help']);
  expect(help.status).toBe(0);
  // The option's entry: from its line to the next option's (yargs wraps the choices onto lines of their own).
  const entry = /^\s+--format\b[\s\S]*?(?=^\s+(?:-\w, )?--\w)/m.exec(help.stdout)?.[0];
  expect(entry, help.stdout).toBeDefined();
  const choices = /\[choices: ([^\]]+)\]/.exec(entry!.replace(/\s+/g, ' '))?.[1];
  expect(choices?.split(', ').map((c) => JSON.parse(c) as string)).toEqual([...ReportFormats]);
});
