// SG204 invalid-signature: a signature slot whose bytes do not verify, or a public key without a slot.
import rule from '../../src/rules/sg204-invalid-signature.js';
import { ruleTable } from '../helpers/rule-table.js';

ruleTable(rule, {
  valid: [
    { name: 'the delay-signed add-in folder', paths: ['fixtures/addin'] },
    { name: 'validly signed with the organization key', paths: ['fixtures/findings/already-signed'] },
    { name: 'validly signed with another key (SG205)', paths: ['fixtures/findings/signed-with-other-key'] },
    {
      name: 'signed, then the PE checksum changed or bytes appended: still valid',
      paths: ['fixtures/findings/passing', 'fixtures/variants/signed-checksum-changed.dll', 'fixtures/variants/signed-with-overlay.dll'],
    },
    { name: 'public-signed (SG202)', paths: ['fixtures/findings/public-signed'] },
  ],
  invalid: [
    {
      name: 'the add-in changed after signing',
      paths: ['fixtures/findings/invalid-signature'],
      reports: [
        {
          ruleId: 'SG204',
          severity: 'error',
          message: 'the strong-name signature does not verify; the RSA signature does not match the hash of the file',
          file: 'fixtures/findings/invalid-signature/FindingAddin.dll',
        },
      ],
    },
    {
      name: 'a public key without a signature slot',
      paths: ['fixtures/findings/passing', 'fixtures/variants/key-without-slot.dll'],
      reports: [
        {
          ruleId: 'SG204',
          severity: 'error',
          message: 'the assembly has a public key but no signature slot',
          file: 'fixtures/variants/key-without-slot.dll',
          data: { details: ['key-without-slot'] },
        },
      ],
    },
    {
      name: 'the STRONGNAMESIGNED flag cleared after signing, and a padding byte flipped',
      paths: ['fixtures/findings/passing', 'fixtures/variants/signed-flag-cleared.dll', 'fixtures/variants/signed-text-padding-flipped.dll'],
      reports: [
        {
          ruleId: 'SG204',
          severity: 'error',
          message: 'the STRONGNAMESIGNED flag is clear (as Mono sn -R leaves it)',
          file: 'fixtures/variants/signed-flag-cleared.dll',
        },
        {
          ruleId: 'SG204',
          severity: 'error',
          message: 'the RSA signature does not match the hash of the file',
          file: 'fixtures/variants/signed-text-padding-flipped.dll',
        },
      ],
    },
  ],
});
