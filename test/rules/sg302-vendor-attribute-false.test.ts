// SG302 vendor-attribute-false: the vendor attribute is applied with `false`.
import rule from '../../src/rules/sg302-vendor-attribute-false.js';
import { ruleTable } from '../helpers/rule-table.js';

const API = 'fixtures/sdk/bin/wrong-turns/VendorCopied/Contoso.AddinApi.dll';
const MESSAGE = 'Contoso.ContosoSignedAssemblyAttribute is applied with false';

ruleTable(rule, {
  valid: [
    { name: 'the add-in folder marked true', paths: ['fixtures/addin'] },
    { name: 'no attribute at all (SG301)', paths: ['fixtures/findings/missing-vendor-attribute'] },
    { name: 'a constructor other than one bool (SG303)', paths: ['fixtures/findings/vendor-attribute-wrong-type'] },
    { name: 'the legacy constructor of the SDK build (SG303)', paths: ['fixtures/sdk/bin/wrong-turns/AttributeLegacyCtor', API] },
    { name: 'the SDK net48 build marked true', paths: ['fixtures/sdk/bin/net48', API] },
  ],
  invalid: [
    {
      name: 'the Mono-built add-in marked false',
      paths: ['fixtures/findings/vendor-attribute-false'],
      reports: [
        {
          ruleId: 'SG302',
          severity: 'error',
          message: MESSAGE,
          file: 'fixtures/findings/vendor-attribute-false/FindingAddin.dll',
          hint: 'Change the attribute to [assembly: Contoso.ContosoSignedAssembly(true)].',
        },
      ],
    },
    {
      name: 'the SDK build marked false',
      paths: ['fixtures/sdk/bin/wrong-turns/AttributeFalse', API],
      reports: [{ ruleId: 'SG302', severity: 'error', message: MESSAGE, file: 'fixtures/sdk/bin/wrong-turns/AttributeFalse/WrongTurn.AttributeFalse.dll' }],
    },
  ],
});
