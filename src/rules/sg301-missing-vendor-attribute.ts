// SG301 missing-vendor-attribute: no <Vendor>SignedAssemblyAttribute on the assembly.
import { vendorAttributeCandidates, vendorAttributeName } from './vendor-attribute.js';
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
    const name = vendorAttributeName(settings);
    if (c.onModule.length > 0) {
      return [{ message: `${c.onModule[0]!.typeName} is applied to the module, not to the assembly`, hint: `Write [assembly: ${name.replace(/Attribute$/, '')}(true)], not [module: …].` }];
    }
    return [{ message: `no ${name} on the assembly`, hint: `Add [assembly: ${settings.vendor}.${name.replace(/Attribute$/, '')}(true)] to the project.` }];
  },
});
