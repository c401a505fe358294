// SG304 vendor-attribute-look-alike: an attribute with the vendor attribute's name that is not the vendor's type.
import { TableId } from '../metadata/schema.js';
import { lookAlikeHint, lookAlikeReason, vendorAttributeCandidates, vendorAttributeOnAssembly } from './vendor-attribute.js';
import { defineRule } from './types.js';

export default defineRule({
  id: 'SG304',
  name: 'vendor-attribute-look-alike',
  scope: 'file',
  defaultSeverity: 'error',
  summary:
    "An attribute named <Vendor>SignedAssemblyAttribute is declared in the add-in or a third-party library instead of referenced from the vendor's API assembly.",
  hint: "Delete the local declaration and reference the vendor's API assembly, which defines the real attribute.",
  check: ({ facts, settings }) => {
    const c = vendorAttributeCandidates(facts, settings);
    // When the vendor's own attribute is present as well, a look-alike beside it changes nothing for the service.
    if (!c || vendorAttributeOnAssembly(c, settings)) return [];
    return c.onAssembly.map((a) => ({
      message: lookAlikeReason(a, settings)!,
      hint: lookAlikeHint(a, settings),
      location: c.module.rowLocation(TableId.CustomAttribute, a.rid),
      data: { type: a.typeName, origin: a.origin },
    }));
  },
});
