// SG501 vendor-assembly-included: the vendor's own assemblies lie among the files; they are never uploaded.
import { defineRule } from './types.js';

export default defineRule({
  id: 'SG501',
  name: 'vendor-assembly-included',
  scope: 'file',
  allFiles: true,
  defaultSeverity: 'warning',
  summary: 'A vendor API assembly lies among the files; it comes from the vendor, is never uploaded, and should not ship with the add-in.',
  hint: 'Set <Private>false</Private> (Copy Local = No) on the reference to the vendor assembly so that the build does not copy it.',
  check: ({ facts }) => (facts.role.kind === 'vendor' ? [{ message: `${facts.assemblyName} is a vendor API assembly; it is left out of the upload` }] : []),
});
