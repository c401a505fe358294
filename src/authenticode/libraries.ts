// The ASN.1 and PKCS libraries, loaded on first use: most files carry no Authenticode signature, and loading
// pkijs and asn1js costs a command about 0.15 s of CPU at start. Their CommonJS builds are loaded with require
// (synchronous, like the reader), so pkijs and our own code share one asn1js and its classes.
import { createRequire } from 'node:module';
import type * as Asn1js from 'asn1js';
import type * as Pkijs from 'pkijs';

const require = createRequire(import.meta.url);
let asn1: typeof Asn1js | undefined;
let pki: typeof Pkijs | undefined;

/** asn1js, loaded once. */
export function asn1js(): typeof Asn1js {
  return (asn1 ??= require('asn1js') as typeof Asn1js);
}

/** pkijs, loaded once. */
export function pkijs(): typeof Pkijs {
  return (pki ??= require('pkijs') as typeof Pkijs);
}
