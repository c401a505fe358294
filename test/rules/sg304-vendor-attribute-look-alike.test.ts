// SG304 vendor-attribute-look-alike: an attribute with the vendor attribute's name that is not the vendor's type.
import rule from '../../src/rules/sg304-vendor-attribute-look-alike.js';
import { ruleTable } from '../helpers/rule-table.js';

const API = 'fixtures/sdk/bin/wrong-turns/VendorCopied/Contoso.AddinApi.dll';

ruleTable(rule, {
  valid: [
    { name: "the add-in folder marked with the vendor's attribute", paths: ['fixtures/addin'] },
    { name: 'no attribute at all (SG301)', paths: ['fixtures/findings/missing-vendor-attribute'] },
    { name: "the vendor's attribute applied with false (SG302)", paths: ['fixtures/findings/vendor-attribute-false'] },
    {
      name: 'the third-party look-alike library itself needs no signing',
      paths: ['fixtures/findings/passing', 'fixtures/findings/vendor-attribute-look-alike-third-party/Acme.Attributes.dll'],
    },
    { name: 'the SDK net48 build', paths: ['fixtures/sdk/bin/net48', API] },
  ],
  invalid: [
    {
      name: 'the attribute declared in the add-in itself',
      paths: ['fixtures/findings/vendor-attribute-look-alike'],
      reports: [
        {
          ruleId: 'SG304',
          severity: 'error',
          message: 'Contoso.ContosoSignedAssemblyAttribute is declared in this assembly, not referenced from a vendor API assembly (Contoso.*)',
          file: 'fixtures/findings/vendor-attribute-look-alike/FindingAddin.dll',
          data: { type: 'Contoso.ContosoSignedAssemblyAttribute' },
        },
      ],
    },
    {
      name: 'the attribute from a third-party library',
      paths: ['fixtures/findings/vendor-attribute-look-alike-third-party'],
      reports: [
        {
          ruleId: 'SG304',
          severity: 'error',
          message: 'Contoso.ContosoSignedAssemblyAttribute comes from Acme.Attributes, which is not a vendor API assembly (Contoso.*)',
          file: 'fixtures/findings/vendor-attribute-look-alike-third-party/FindingAddin.dll',
        },
      ],
    },
    {
      name: 'the SDK build declaring its own attribute, the vendor API beside it',
      paths: ['fixtures/sdk/bin/wrong-turns/LookAlike', API],
      reports: [
        { ruleId: 'SG304', severity: 'error', message: 'is declared in this assembly', file: 'fixtures/sdk/bin/wrong-turns/LookAlike/WrongTurn.LookAlike.dll' },
      ],
    },
    {
      name: 'a generic look-alike',
      paths: ['fixtures/sdk/bin/wrong-turns/GenericLookAlike', API],
      reports: [
        {
          ruleId: 'SG304',
          severity: 'error',
          message: "Contoso.ContosoSignedAssemblyAttribute<T> is a generic look-alike declared in this assembly; the vendor's attribute is not generic",
          file: 'fixtures/sdk/bin/wrong-turns/GenericLookAlike/WrongTurn.GenericLookAlike.dll',
        },
      ],
    },
  ],
});
