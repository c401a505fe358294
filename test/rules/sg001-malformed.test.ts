// SG001 malformed: every corrupted fixture gives the code fixtures/corrupt-expected.json records for it, as a
// finding on the file; the readable variants and native code beside them give none.
import { readFileSync } from 'node:fs';
import rule from '../../src/rules/sg001-malformed.js';
import { fixturePath } from '../helpers/fixtures.js';
import { ruleTable } from '../helpers/rule-table.js';

interface Expected {
  readonly file: string;
  readonly error?: string;
}
const expected: Expected[] = JSON.parse(readFileSync(fixturePath('corrupt-expected.json'), 'utf8'));
const corrupt = expected.filter((e) => e.error);
const readable = expected.filter((e) => !e.error);

ruleTable(rule, {
  valid: [
    { name: 'the passing add-in folder', paths: ['fixtures/addin'] },
    { name: 'a multi-module assembly with its netmodule', paths: ['fixtures/modules/passing'] },
    { name: 'native code named explicitly is no assembly, but not malformed', paths: ['fixtures/variants/native.dll'] },
    { name: 'a netmodule named explicitly is SG002, not malformed', paths: ['fixtures/assemblies/part.netmodule'] },
    ...readable.map((e) => ({ name: `${e.file} (readable: strong-name variants and native code)`, paths: [`fixtures/${e.file}`] })),
  ],
  invalid: [
    ...corrupt.map((e) => ({
      name: `${e.file} -> ${e.error}`,
      paths: [`fixtures/${e.file}`],
      reports: [{ ruleId: 'SG001', severity: 'error' as const, message: new RegExp(`^${e.error}: `), file: `fixtures/${e.file}`, data: { code: e.error } }],
    })),
    {
      name: 'a corrupted file beside the passing add-in: only it is reported',
      paths: ['fixtures/findings/passing', 'fixtures/corrupt/no-pe-signature.dll'],
      reports: [{ ruleId: 'SG001', severity: 'error', message: 'SG_ERR_PE_NOT_PE: ', file: 'fixtures/corrupt/no-pe-signature.dll' }],
    },
    {
      name: 'a corrupted file found in a folder (not named) is reported too',
      paths: ['fixtures/corrupt'],
      reports: corrupt
        .map((e) => `fixtures/${e.file}`)
        .sort()
        .map((file) => ({ ruleId: 'SG001', severity: 'error' as const, message: /^SG_ERR_[A-Z_]+: /, file })),
    },
  ],
});
