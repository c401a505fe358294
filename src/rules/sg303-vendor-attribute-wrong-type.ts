// SG303 vendor-attribute-wrong-type: the vendor's attribute type, but not built with one bool argument.
import { isSignGateError } from '../core/errors.js';
import { toHex } from '../binary/byte-cursor.js';
import { TableId } from '../metadata/schema.js';
import { ONE_BOOL_CTOR, vendorAttributeCandidates, vendorAttributeOnAssembly } from './vendor-attribute.js';
import { defineRule } from './types.js';

export default defineRule({
  id: 'SG303',
  name: 'vendor-attribute-wrong-type',
  scope: 'file',
  defaultSeverity: 'error',
  summary: 'The vendor attribute is not constructed with exactly one bool argument (the constructor signature or the value blob is wrong).',
  hint: 'Use the constructor that takes one bool: [assembly: Contoso.ContosoSignedAssembly(true)]; reference the vendor API version your license covers.',
  check: ({ facts, settings }) => {
    const c = vendorAttributeCandidates(facts, settings);
    const attribute = c && vendorAttributeOnAssembly(c, settings);
    if (!c || !attribute) return [];
    const hint = `Use the constructor that takes one bool: [assembly: ${attribute.typeName.replace(/Attribute$/, '')}(true)]; reference the vendor API version your license covers.`;
    const location = c.module.rowLocation(TableId.CustomAttribute, attribute.rid);
    let signature: string;
    try {
      signature = toHex(c.module.attributeConstructor(attribute).signature.bytes);
    } catch (error) {
      // A constructor whose signature cannot be read is this attribute's fault (inspect shows it on the attribute).
      if (!isSignGateError(error)) throw error;
      return [{ message: `${attribute.typeName} has a constructor whose signature cannot be read: ${error.message}`, hint, location }];
    }
    if (signature !== ONE_BOOL_CTOR) {
      return [
        {
          message: `${attribute.typeName} is constructed through a constructor with signature ${signature}, not one bool (${ONE_BOOL_CTOR})`,
          hint,
          location,
          data: { signature },
        },
      ];
    }
    try {
      c.module.decodeAttribute(attribute);
      return [];
    } catch (error) {
      if (!isSignGateError(error)) throw error;
      return [{ message: `${attribute.typeName} has a value blob that does not decode as one bool: ${error.message}`, hint, location }];
    }
  },
});
