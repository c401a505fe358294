// SG301 missing-vendor-attribute: no <Vendor>SignedAssemblyAttribute on an assembly that must be uploaded.
import rule from '../../src/rules/sg301-missing-vendor-attribute.js';
import { ruleTable } from '../helpers/rule-table.js';

const API = 'fixtures/sdk/bin/wrong-turns/VendorCopied/Contoso.AddinApi.dll';
const MESSAGE = 'no ContosoSignedAssemblyAttribute on the assembly';

ruleTable(rule, {
  valid: [
    { name: 'the marked add-in folder', paths: ['fixtures/addin'] },
    { name: 'the attribute applied with false is SG302', paths: ['fixtures/findings/vendor-attribute-false'] },
    { name: 'the attribute with the wrong constructor is SG303', paths: ['fixtures/findings/vendor-attribute-wrong-type'] },
    { name: 'a look-alike of the attribute is SG304', paths: ['fixtures/findings/vendor-attribute-look-alike'] },
    { name: 'a library that needs no signing carries none', paths: ['fixtures/findings/passing', 'fixtures/addin/ThirdParty.Json.dll'] },
    { name: 'the SDK net8.0 build', paths: ['fixtures/sdk/bin/net8.0', API] },
    {
      name: 'the vendor name matched ignoring case',
      paths: ['fixtures/findings/passing'],
      settings: { vendor: 'contoso', vendorApi: ['contoso.*'], vendorNamespace: 'contoso' },
    },
  ],
  invalid: [
    {
      name: 'the Mono-built add-in without the attribute, no vendor API at hand: the namespace is a guess',
      paths: ['fixtures/findings/missing-vendor-attribute'],
      reports: [
        {
          ruleId: 'SG301',
          severity: 'error',
          message: new RegExp(`^${MESSAGE}$`),
          file: 'fixtures/findings/missing-vendor-attribute/FindingAddin.dll',
          hint: 'Contoso is a guess',
        },
      ],
    },
    {
      name: 'the SDK build without the attribute',
      paths: ['fixtures/sdk/bin/wrong-turns/NoAttribute', API],
      reports: [{ ruleId: 'SG301', severity: 'error', message: MESSAGE, file: 'fixtures/sdk/bin/wrong-turns/NoAttribute/WrongTurn.NoAttribute.dll' }],
    },
    {
      name: 'with the declared attribute type known: the hint names it as the vendor API declares it',
      paths: ['fixtures/findings/missing-vendor-attribute'],
      settings: { declaredVendorAttributes: [{ fullName: 'Contoso.Addins.ContosoSignedAssemblyAttribute', assembly: 'Contoso.AddinApi' }] },
      reports: [
        {
          ruleId: 'SG301',
          severity: 'error',
          message: MESSAGE,
          file: 'fixtures/findings/missing-vendor-attribute/FindingAddin.dll',
          hint: 'Add [assembly: Contoso.Addins.ContosoSignedAssembly(true)] to the project (or using Contoso.Addins; and [assembly: ContosoSignedAssembly(true)]): Contoso.AddinApi declares',
          data: { declaredType: 'Contoso.Addins.ContosoSignedAssemblyAttribute', declaredIn: 'Contoso.AddinApi' },
        },
      ],
    },
    {
      name: 'the attribute compiled into the netmodule, not the manifest',
      paths: ['fixtures/modules/attribute-in-module'],
      reports: [
        {
          ruleId: 'SG301',
          severity: 'error',
          message: `${MESSAGE}: the attribute is declared in AddinCode.netmodule but not in the manifest`,
          file: 'fixtures/modules/attribute-in-module/ModuleAddin.dll',
          data: { declaredIn: ['AddinCode.netmodule'] },
        },
      ],
    },
    {
      name: 'another vendor name: the marked add-in lacks that vendor attribute',
      paths: ['fixtures/findings/passing'],
      settings: { vendor: 'Fabrikam', vendorApi: ['Contoso.*'], vendorNamespace: 'Fabrikam' },
      reports: [
        {
          ruleId: 'SG301',
          severity: 'error',
          message: 'no FabrikamSignedAssemblyAttribute on the assembly',
          file: 'fixtures/findings/passing/FindingAddin.dll',
        },
      ],
    },
  ],
});
