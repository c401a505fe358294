// SG501 vendor-assembly-included: the vendor's own API assemblies lie among the files (a warning: never uploaded).
import rule from '../../src/rules/sg501-vendor-assembly-included.js';
import { ruleTable } from '../helpers/rule-table.js';

const API = 'fixtures/sdk/bin/wrong-turns/VendorCopied/Contoso.AddinApi.dll';

ruleTable(rule, {
  valid: [
    { name: 'the add-in without the vendor API beside it', paths: ['fixtures/findings/passing'] },
    { name: 'the SDK net48 build, whose vendor API was not copied', paths: ['fixtures/sdk/bin/net48'] },
    { name: 'API patterns that name other assemblies', paths: ['fixtures/vendor'], settings: { vendorApi: ['Contoso.Kernel'] } },
    { name: 'a library of another publisher', paths: ['fixtures/findings/passing', 'fixtures/addin/ThirdParty.Json.dll'] },
  ],
  invalid: [
    {
      name: 'the sample add-in folder with Contoso.AddinApi.dll copied in',
      paths: ['fixtures/addin'],
      reports: [
        {
          ruleId: 'SG501',
          severity: 'warning',
          message: 'Contoso.AddinApi is a vendor API assembly; it is left out of the upload',
          file: 'fixtures/addin/Contoso.AddinApi.dll',
          hint: '<Private>false</Private>',
        },
      ],
    },
    {
      name: 'the SDK build with Copy Local on the vendor reference',
      paths: ['fixtures/sdk/bin/wrong-turns/VendorCopied'],
      reports: [{ ruleId: 'SG501', severity: 'warning', message: 'Contoso.AddinApi is a vendor API assembly', file: API }],
    },
    {
      name: "only the vendor's assemblies: one finding each",
      paths: ['fixtures/vendor'],
      reports: [
        { ruleId: 'SG501', severity: 'warning', message: 'Contoso.AddinApi is a vendor API assembly', file: 'fixtures/vendor/Contoso.AddinApi.dll' },
        { ruleId: 'SG501', severity: 'warning', message: 'Contoso.Core is a vendor API assembly', file: 'fixtures/vendor/Contoso.Core.dll' },
      ],
    },
    {
      name: 'an API pattern that names one of them exactly',
      paths: ['fixtures/vendor'],
      settings: { vendorApi: ['Contoso.Core'] },
      reports: [{ ruleId: 'SG501', severity: 'warning', message: 'Contoso.Core is a vendor API assembly', file: 'fixtures/vendor/Contoso.Core.dll' }],
    },
  ],
});
