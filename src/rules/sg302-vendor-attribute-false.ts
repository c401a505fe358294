// SG302 vendor-attribute-false: the vendor attribute is there, with `false`.
import { isSignGateError } from '../core/errors.js';
import { ONE_BOOL_CTOR, vendorAttributeCandidates, vendorAttributeOnAssembly } from './vendor-attribute.js';
import { defineRule } from './types.js';
import { toHex } from '../binary/byte-cursor.js';
import { TableId } from '../metadata/schema.js';

export default defineRule({
  id: 'SG302',
  name: 'vendor-attribute-false',
  scope: 'file',
  defaultSeverity: 'error',
  summary: 'The vendor attribute is applied with the argument false; the service signs only assemblies marked true.',
  hint: 'Change the attribute to [assembly: Contoso.ContosoSignedAssembly(true)].',
  check: ({ facts, settings }) => {
    const c = vendorAttributeCandidates(facts, settings);
    const attribute = c && vendorAttributeOnAssembly(c, settings);
    if (!c || !attribute) return [];
    try {
      // A constructor other than one bool, or one that cannot be read: vendor-attribute-wrong-type reports it.
      if (toHex(c.module.attributeConstructor(attribute).signature.bytes) !== ONE_BOOL_CTOR) return [];
      const value = c.module.decodeAttribute(attribute).fixedArguments[0]?.value;
      const location = c.module.rowLocation(TableId.CustomAttribute, attribute.rid);
      return value === false
        ? [
            {
              message: `${attribute.typeName} is applied with false`,
              hint: `Change the attribute to [assembly: ${attribute.typeName.replace(/Attribute$/, '')}(true)].`,
              location,
            },
          ]
        : [];
    } catch (error) {
      if (isSignGateError(error)) return []; // vendor-attribute-wrong-type reports an undecodable value
      throw error;
    }
  },
});
