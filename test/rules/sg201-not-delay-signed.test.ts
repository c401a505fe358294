// SG201 not-delay-signed: a file that must be uploaded carries no public key at all.
import rule from '../../src/rules/sg201-not-delay-signed.js';
import { expectedKey } from '../helpers/check.js';
import { ruleTable } from '../helpers/rule-table.js';

const API = 'fixtures/sdk/bin/wrong-turns/VendorCopied/Contoso.AddinApi.dll';

ruleTable(rule, {
  valid: [
    { name: 'the delay-signed add-in folder', paths: ['fixtures/addin'] },
    { name: 'delay-signed with another key (SG205, not SG201)', paths: ['fixtures/findings/wrong-key'] },
    { name: 'public-signed (SG202, not SG201)', paths: ['fixtures/findings/public-signed'] },
    { name: 'an unsigned library that needs no signing beside the add-in', paths: ['fixtures/findings/passing', 'fixtures/assemblies/unsigned.dll'] },
    { name: 'the unsigned NuGet-style library builds beside the add-in', paths: ['fixtures/findings/passing', 'fixtures/sdk/bin/unsigned-lib'] },
    {
      name: 'the STRONGNAMESIGNED flag without a key, on a file that needs no signing',
      paths: ['fixtures/findings/passing', 'fixtures/variants/flag-without-key.dll'],
    },
  ],
  invalid: [
    {
      name: 'the Mono-built add-in without a strong name',
      paths: ['fixtures/findings/not-delay-signed'],
      reports: [
        {
          ruleId: 'SG201',
          severity: 'error',
          message: 'the assembly has no public key (not strong-named)',
          file: 'fixtures/findings/not-delay-signed/FindingAddin.dll',
          hint: '<AssemblyOriginatorKeyFile>12345_public.snk</AssemblyOriginatorKeyFile>',
          data: { state: 'unsigned' },
        },
      ],
    },
    {
      name: 'the SDK-built add-in with SignAssembly off, its vendor API beside it',
      paths: ['fixtures/sdk/bin/wrong-turns/NotSigned', API],
      reports: [
        {
          ruleId: 'SG201',
          severity: 'error',
          message: 'the assembly has no public key',
          file: 'fixtures/sdk/bin/wrong-turns/NotSigned/WrongTurn.NotSigned.dll',
        },
      ],
    },
    {
      name: 'the hint names every configured key file',
      paths: ['fixtures/findings/not-delay-signed'],
      settings: { keys: [expectedKey('test-keys/12345_public.snk'), expectedKey('test-keys/67890_public.snk', 67890)] },
      reports: [
        {
          ruleId: 'SG201',
          severity: 'error',
          message: 'the assembly has no public key',
          file: 'fixtures/findings/not-delay-signed/FindingAddin.dll',
          hint: '(or 67890_public.snk for another license option)',
        },
      ],
    },
  ],
});
