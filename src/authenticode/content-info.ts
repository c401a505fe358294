// The PKCS#7 ContentInfo holding a SignedData (RFC 5652 5.1), taken apart in place: the signature's and an RFC 3161
// timestamp token's.
import { accept, childrenOf, type Context, malformed, Oid, oidOf } from './asn1-read.js';
import { derChildren, DerTag, type Der } from './der.js';

/** A SignedData as its parts (RFC 5652 5.1), views of the blob. */
export interface SignedDataParts {
  readonly eContentType: string;
  /** The content inside encapContentInfo's [0] EXPLICIT, when present. */
  readonly eContent: Der | undefined;
  /** Each entry of `certificates [0] IMPLICIT`. */
  readonly certificates: readonly Der[];
  readonly signerInfos: readonly Der[];
}

/**
 * ContentInfo { contentType, [0] EXPLICIT content } holding a SignedData, taken apart.
 * @throws FormatError SG_ERR_AC_BAD_SIGNATURE
 */
export function readSignedData(ctx: Context, element: Der, what: string): SignedDataParts {
  const ci = childrenOf(element, DerTag.sequence);
  const type = ci[0];
  if (type?.tag !== DerTag.oid) throw malformed(ctx, `${what} is not a PKCS#7 ContentInfo`);
  const typeOid = oidOf(ctx, type);
  if (typeOid !== Oid.signedData) throw malformed(ctx, `${what}: the content type is ${typeOid}, not SignedData (${Oid.signedData})`);
  const sd = childrenOf(ci[1], DerTag.context0)[0];
  const fields = childrenOf(sd, DerTag.sequence);
  const encap = childrenOf(fields[2], DerTag.sequence);
  const eType = encap[0];
  const signerInfos = fields[fields.length - 1];
  if (fields[0]?.tag !== DerTag.integer || fields[1]?.tag !== DerTag.set || eType?.tag !== DerTag.oid || signerInfos?.tag !== DerTag.set || fields.length < 4) {
    throw malformed(ctx, `${what} is not a well-formed SignedData (version, digestAlgorithms, encapContentInfo, signerInfos)`);
  }
  const certs = fields.slice(3, -1).find((f) => f.tag === DerTag.context0);
  accept(ctx, [...ci.slice(2), fields[0], fields[1], ...fields.slice(3, -1).filter((f) => f !== certs), ...encap.slice(2)]);
  return {
    eContentType: oidOf(ctx, eType),
    eContent: childrenOf(encap[1], DerTag.context0)[0],
    certificates: childrenOf(certs, DerTag.context0),
    signerInfos: derChildren(signerInfos),
  };
}
