// SG301 missing-vendor-attribute: no <Vendor>SignedAssemblyAttribute on the assembly.
import { csharpApplication, isVendorAttributeName, vendorAttributeCandidates, vendorAttributeKnown, vendorAttributeSpelling } from './vendor-attribute.js';
import { defineRule } from './types.js';

export default defineRule({
  id: 'SG301',
  name: 'missing-vendor-attribute',
  scope: 'file',
  defaultSeverity: 'error',
  summary: 'The assembly does not carry the vendor attribute <Vendor>SignedAssemblyAttribute(true) at assembly level.',
  hint: 'Add [assembly: Contoso.ContosoSignedAssembly(true)] (with your vendor name) to AssemblyInfo.cs or any source file of the project.',
  check: ({ facts, settings, all }) => {
    const c = vendorAttributeCandidates(facts, settings);
    if (!c || c.onAssembly.length > 0) return [];
    const spelling = vendorAttributeSpelling(facts, settings);
    if (c.onModule.length > 0) {
      return [
        { message: `${c.onModule[0]!.typeName} is applied to the module, not to the assembly`, hint: `Write [assembly: ${spelling}(true)], not [module: …].` },
      ];
    }
    const name = `${spelling.split('.').pop()}Attribute`;
    // The runtime reads assembly attributes from the manifest only; one compiled into a netmodule is not seen.
    const inModules = facts.netmodules.flatMap((link) => {
      const module = link.path === undefined ? undefined : all.get(link.path)?.module;
      return module?.netmoduleAssemblyAttributes().some((a) => isVendorAttributeName(a.typeName, settings)) ? [link.row.name] : [];
    });
    if (inModules.length > 0) {
      return [
        {
          message: `no ${name} on the assembly: the attribute is declared in ${inModules.join(', ')} but not in the manifest; the runtime reads assembly attributes from the manifest module only`,
          hint: `Declare [assembly: ${spelling}(true)] in a source file of the manifest module (al copies no attributes from netmodules; with -addmodule, in the sources the compiler builds the manifest from).`,
          data: { declaredIn: inModules },
        },
      ];
    }
    const declared = settings.declaredVendorAttributes?.[0];
    if (declared) {
      const { qualified, namespace, short } = csharpApplication(declared);
      return [
        {
          message: `no ${declared.fullName.split('.').pop()} on the assembly`,
          hint: `Add [assembly: ${qualified}(true)] to the project${namespace ? ` (or using ${namespace}; and [assembly: ${short}(true)])` : ''}: ${declared.assembly} declares ${declared.fullName}.`,
          data: { declaredType: declared.fullName, declaredIn: declared.assembly },
        },
      ];
    }
    const known = vendorAttributeKnown(facts, settings);
    return [
      {
        message: `no ${name} on the assembly`,
        hint: known
          ? `Add [assembly: ${spelling}(true)] to the project.`
          : `Add [assembly: ${spelling}(true)] to the project, with the namespace the vendor declares the attribute in ` +
            `(${spelling.slice(0, spelling.lastIndexOf('.'))} is a guess: no vendor API assembly was at hand to read it from). ` +
            `Pass the vendor API assembly the add-in compiles against (${settings.vendorApi.join(', ')}) with --reference <its .dll or folder>, ` +
            'and the check names the attribute as that assembly declares it; ' +
            "or look it up in the vendor's API reference, Visual Studio's Object Browser or ILSpy.",
      },
    ];
  },
});
