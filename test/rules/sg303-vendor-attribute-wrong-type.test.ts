// SG303 vendor-attribute-wrong-type: the vendor's attribute type, not built with exactly one bool argument.
import rule from '../../src/rules/sg303-vendor-attribute-wrong-type.js';
import { ruleTable } from '../helpers/rule-table.js';

const API = 'fixtures/sdk/bin/wrong-turns/VendorCopied/Contoso.AddinApi.dll';
const MESSAGE = 'Contoso.ContosoSignedAssemblyAttribute is constructed through a constructor with signature 200201020e, not one bool (20010102)';

ruleTable(rule, {
  valid: [
    { name: 'the add-in folder marked with one bool', paths: ['fixtures/addin'] },
    { name: 'one bool, false (SG302)', paths: ['fixtures/findings/vendor-attribute-false'] },
    { name: 'no attribute at all (SG301)', paths: ['fixtures/findings/missing-vendor-attribute'] },
    { name: 'a look-alike type (SG304)', paths: ['fixtures/findings/vendor-attribute-look-alike'] },
    { name: 'the SDK net8.0 build', paths: ['fixtures/sdk/bin/net8.0', API] },
  ],
  invalid: [
    {
      name: 'the Mono-built add-in with a (bool, string) constructor',
      paths: ['fixtures/findings/vendor-attribute-wrong-type'],
      reports: [
        {
          ruleId: 'SG303',
          severity: 'error',
          message: MESSAGE,
          file: 'fixtures/findings/vendor-attribute-wrong-type/FindingAddin.dll',
          hint: 'Use the constructor that takes one bool: [assembly: Contoso.ContosoSignedAssembly(true)]',
          data: { signature: '200201020e' },
        },
      ],
    },
    {
      name: 'the SDK build through the legacy constructor',
      paths: ['fixtures/sdk/bin/wrong-turns/AttributeLegacyCtor', API],
      reports: [
        { ruleId: 'SG303', severity: 'error', message: MESSAGE, file: 'fixtures/sdk/bin/wrong-turns/AttributeLegacyCtor/WrongTurn.AttributeLegacyCtor.dll' },
      ],
    },
  ],
});
