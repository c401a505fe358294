// SG206 signature-slot-size: the signature slot the CLI header reserves is not the size the key needs.
import rule from '../../src/rules/sg206-signature-slot-size.js';
import { expectedKey } from '../helpers/check.js';
import { ruleTable } from '../helpers/rule-table.js';

const options = [expectedKey('test-keys/12345_public.snk'), expectedKey('test-keys/67890_public.snk', 67890)];

ruleTable(rule, {
  valid: [
    { name: 'the delay-signed add-in folder (1024-bit key, 128-byte slot)', paths: ['fixtures/addin'] },
    {
      name: 'a helper delay-signed with a 2048-bit option key (256-byte slot)',
      paths: ['fixtures/findings/passing', 'fixtures/assemblies/delay-2048.dll'],
      settings: { keys: options },
    },
    { name: 'a PE32+ helper, delay-signed', paths: ['fixtures/findings/passing', 'fixtures/assemblies/pe32plus-delay.dll'] },
    { name: 'not strong-named: no slot, no key', paths: ['fixtures/findings/not-delay-signed'] },
    { name: 'public-signed: an empty slot of the right size', paths: ['fixtures/findings/public-signed'] },
  ],
  invalid: [
    {
      name: 'the add-in built with a 64-byte slot for a 1024-bit key',
      paths: ['fixtures/findings/signature-slot-size'],
      reports: [
        {
          ruleId: 'SG206',
          severity: 'error',
          message: 'the signature slot is 64 bytes, but the 1024-bit key needs 128',
          file: 'fixtures/findings/signature-slot-size/FindingAddin.dll',
          data: { slotSize: 64, keyBits: 1024 },
        },
      ],
    },
    {
      name: 'a helper with the option key and a shrunk slot, uploaded with the add-in',
      paths: ['fixtures/findings/passing', 'fixtures/variants/slot-size-mismatch.dll'],
      reports: [{ ruleId: 'SG206', severity: 'error', message: 'but the 1024-bit key needs 128', file: 'fixtures/variants/slot-size-mismatch.dll' }],
    },
  ],
});
