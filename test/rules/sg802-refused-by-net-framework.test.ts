// SG802 refused-by-net-framework: a file nobody is going to sign targets .NET Framework and is delay-signed,
// public-signed or signed with a signature that does not match its bytes.
import rule from '../../src/rules/sg802-refused-by-net-framework.js';
import { expectedKey } from '../helpers/check.js';
import { ruleTable } from '../helpers/rule-table.js';

const option = expectedKey('test-keys/12345_public.snk');
const option67890 = expectedKey('test-keys/67890_public.snk', 67890);
const other = expectedKey('test-keys/other_public.snk', null);
const ADDIN = 'fixtures/findings/passing';
const REFUSED = '.NET Framework refuses to load it (FileLoadException, strong name validation failed)';

ruleTable(rule, {
  valid: [
    { name: 'the add-in folder: every strong-named file is signed by the service or validly signed', paths: ['fixtures/addin'] },
    {
      name: "a helper delay-signed with another option's key, that key given: the service signs it",
      paths: [ADDIN, 'fixtures/assemblies/delay-2048.dll'],
      settings: { keys: [option, option67890] },
    },
    { name: 'a helper delay-signed with the option key is uploaded', paths: [ADDIN, 'fixtures/assemblies/delay-1024.dll'] },
    { name: 'a library validly signed with another key loads', paths: [ADDIN, 'fixtures/assemblies/signed-other-key.dll'] },
    { name: 'libraries without a strong name load (net48, net8.0, netstandard2.0)', paths: [ADDIN, 'fixtures/sdk/bin/unsigned-lib'] },
    { name: "the vendor's own assembly is not shipped (SG501)", paths: ['fixtures/sdk/bin/wrong-turns/VendorCopied'] },
    { name: 'a netmodule has no strong name of its own', paths: ['fixtures/modules/passing'] },
    { name: 'files that need signing are SG202/SG204, not SG802', paths: ['fixtures/findings/public-signed', 'fixtures/findings/invalid-signature'] },
  ],
  invalid: [
    {
      name: 'a helper delay-signed with a key of no configured option',
      paths: ['fixtures/findings/refused-by-net-framework'],
      reports: [
        {
          ruleId: 'SG802',
          severity: 'error',
          message: `targets .NET Framework (references mscorlib): delay-signed with key token ${other.token}, which is not the key of a configured option, so the service will not sign it; ${REFUSED}`,
          file: 'fixtures/findings/refused-by-net-framework/DelaySignedHelper.dll',
          hint: `Sign DelaySignedHelper with the key pair of token ${other.token} (signgate fix fixtures/findings/refused-by-net-framework --key <pair.snk> --in-place`,
          data: { state: 'delay-signed', token: other.token },
        },
      ],
    },
    {
      name: "a helper delay-signed with option 67890's key, that key not given",
      paths: [ADDIN, 'fixtures/assemblies/delay-2048.dll'],
      reports: [
        {
          ruleId: 'SG802',
          severity: 'error',
          message: `delay-signed with key token ${option67890.token}, which is not the key of a configured option`,
          file: 'fixtures/assemblies/delay-2048.dll',
          hint: `If token ${option67890.token} is the key of another license option of yours, pass its <optionId>_public.snk with --key as well`,
        },
      ],
    },
    {
      name: 'with another key configured: a public-signed helper and one whose signature no longer matches',
      paths: [ADDIN, 'fixtures/variants/public-signed.dll', 'fixtures/variants/signed-text-padding-flipped.dll'],
      settings: { keys: [other] },
      reports: [
        {
          ruleId: 'SG802',
          severity: 'error',
          message: `public-signed with key token ${option.token}, which is not the key of a configured option`,
          file: 'fixtures/variants/public-signed.dll',
          data: { state: 'public-signed' },
        },
        {
          ruleId: 'SG802',
          severity: 'error',
          message: `its strong-name signature (key token ${option.token}) does not match its bytes; ${REFUSED}`,
          file: 'fixtures/variants/signed-text-padding-flipped.dll',
          hint: 'again after the tool that changed it',
          data: { state: 'invalid-signature' },
        },
      ],
    },
  ],
});
