// SG301 missing-vendor-attribute: no <Vendor>SignedAssemblyAttribute on the assembly.
import { vendorAttributeCandidates, vendorAttributeSpelling } from './vendor-attribute.js';
import { defineRule } from './types.js';

export default defineRule({
  id: 'SG301',
  name: 'missing-vendor-attribute',
  scope: 'file',
  defaultSeverity: 'error',
  summary: 'The assembly does not carry the vendor attribute <Vendor>SignedAssemblyAttribute(true) at assembly level.',
  hint: 'Add [assembly: Contoso.ContosoSignedAssembly(true)] (with your vendor name) to AssemblyInfo.cs or any source file of the project.',
  check: ({ facts, settings }) => {
    const c = vendorAttributeCandidates(facts, settings);
    if (!c || c.onAssembly.length > 0) return [];
    const spelling = vendorAttributeSpelling(facts, settings);
    if (c.onModule.length > 0) {
      return [{ message: `${c.onModule[0]!.typeName} is applied to the module, not to the assembly`, hint: `Write [assembly: ${spelling}(true)], not [module: …].` }];
    }
    return [{ message: `no ${spelling.split('.').pop()}Attribute on the assembly`, hint: `Add [assembly: ${spelling}(true)] to the project.` }];
  },
});
