// The service's one decision per file (src/server/domain/signing-decision.ts), as a table: the check's result on a file
// and the organization in, sign / unchanged / Error out. Pure: no file is read.
import { describe, expect, test } from 'vitest';
import type { FileResult } from '../../../src/rules/rule-runner.js';
import { decideSigning, malformedMessages } from '../../../src/server/domain/signing-decision.js';
import { FormatError } from '../../../src/core/errors.js';
import { sandboxConfig } from '../../helpers/server.js';

const org = sandboxConfig().organizations.get('sandbox')!;
const option = org.licenses.find((l) => l.optionId === 12345)!;

const passing: FileResult = {
  path: 'Addin.dll',
  size: 4096,
  assemblyName: 'Addin',
  assemblyVersion: '1.2.0.0',
  publicKeyToken: option.token,
  optionId: 12345,
  needsSigning: true,
  role: 'direct',
  reason: 'uses the vendor API directly',
  outcome: 'pass',
  upload: true,
  findings: [],
};
const finding = (ruleId: string, rule: string, severity: 'error' | 'warning' | 'note') => ({
  ruleId,
  rule,
  severity,
  message: `${rule} found`,
  hint: 'do this',
  file: 'Addin.dll',
});

describe('decideSigning', () => {
  test.each([
    [
      'a passing file with an option key is signed with that option',
      passing,
      'sign',
      /^Signed with option 12345 \(Addin 1\.2\.0\.0, key token [0-9a-f]{16}\)\.$/,
    ],
    [
      'an error finding ends it Error with the finding and its fix',
      { ...passing, outcome: 'fail', findings: [finding('SG301', 'missing-vendor-attribute', 'error')] },
      'error',
      /^SG301 missing-vendor-attribute: missing-vendor-attribute found\. do this$/,
    ],
    [
      "SG001 ends it Error with the verdict's words",
      { ...passing, role: 'unreadable', outcome: 'fail', findings: [finding('SG001', 'malformed', 'error')] },
      'error',
      /^SG001 malformed/,
    ],
    ['a netmodule of a passing assembly is returned unchanged', { ...passing, role: 'module', needsSigning: false }, 'unchanged', /^Returned unchanged: /],
    [
      'a file that needs no signing is not signed',
      { ...passing, role: 'not-required', needsSigning: false, outcome: 'not-required', reason: 'not required: uses no vendor API' },
      'error',
      /^Not signed: not required/,
    ],
    ['a key of no option is not signed', { ...passing, optionId: undefined }, 'error', /is not the key of any option/],
    [
      'already signed with the option is returned unchanged',
      { ...passing, findings: [finding('SG203', 'already-signed', 'warning')] },
      'unchanged',
      /^Already signed with option 12345/,
    ],
  ] as const)('%s', (_name, file, action, first) => {
    const decision = decideSigning(file as FileResult, org, new Map());
    expect(decision.action).toBe(action);
    expect(decision.messages[0]!.message).toMatch(first);
    if (action === 'sign') expect(decision.action === 'sign' && decision.license.optionId).toBe(12345);
  });

  test('SG205 names where the public key is; warnings of a signed file are kept', () => {
    const wrong = decideSigning({ ...passing, outcome: 'fail', findings: [finding('SG205', 'wrong-key', 'error')] }, org, new Map());
    expect(wrong.messages[0]!.message).toContain('GET /licenses/');
    const warned = decideSigning({ ...passing, findings: [finding('SG208', 'authenticode-before-strong-name', 'warning')] }, org, new Map());
    expect(warned.messages.map((m) => m.messageType)).toEqual(['Info', 'Warning']);
  });

  test('a key the job was accepted with and the configuration no longer holds is refused, naming the option', () => {
    const decision = decideSigning({ ...passing, publicKeyToken: '0123456789abcdef', optionId: undefined }, org, new Map([['0123456789abcdef', 12345]]));
    expect(decision.action).toBe('error');
    expect(decision.messages[0]!.message).toContain('key of option 12345 this job was accepted with (key token 0123456789abcdef)');
  });

  test("a fault of the file met while signing is said as check's SG001", () => {
    const [error] = malformedMessages(new FormatError('SG_ERR_SN_BAD_SLOT', 'the slot is gone', { structure: 'CLI header', fileOffset: 8 }));
    expect(error).toEqual({
      messageType: 'Error',
      message: expect.stringMatching(/^SG001 malformed: SG_ERR_SN_BAD_SLOT: the slot is gone\. signgate checks and signs only/),
    });
  });
});
