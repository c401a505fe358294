// What the Authenticode readers share: the reading context and its error, the OIDs, and the small readers of the two
// ASN.1 paths (signed-data.ts says which): over the DER in place (der.ts), and over an asn1js tree, which is also
// how a part is judged (asn() and accept(): what asn1js refuses is refused).
import type * as asn1js from 'asn1js';
import { FormatError } from '../core/errors.js';
import { asn1jsAccepts, oidString } from './asn1-accept.js';
import { parseBer, type BlobOrigin } from './ber-guard.js';
import { derChildren, DerTag, type Der } from './der.js';
import type { AuthenticodeLimits } from './limits.js';
import * as lib from './libraries.js';

export const Oid = {
  signedData: '1.2.840.113549.1.7.2',
  spcIndirectData: '1.3.6.1.4.1.311.2.1.4',
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingTime: '1.2.840.113549.1.9.5',
  counterSignature: '1.2.840.113549.1.9.6',
  rfc3161Timestamp: '1.3.6.1.4.1.311.3.3.1',
  nestedSignature: '1.3.6.1.4.1.311.2.4.1',
  spcSpOpusInfo: '1.3.6.1.4.1.311.2.1.12',
  tstInfo: '1.2.840.113549.1.9.16.1.4',
} as const;

/** One certificate table entry being read. */
export interface Context {
  readonly origin: BlobOrigin;
  readonly limits: AuthenticodeLimits;
  /** Signatures parsed so far in this file (shared by every entry and nesting level). */
  count: { value: number };
}

export function malformed(ctx: Context, what: string, cause?: unknown): FormatError {
  return new FormatError(
    'SG_ERR_AC_BAD_SIGNATURE',
    `${ctx.origin.structure}: ${what}`,
    { structure: ctx.origin.structure, fileOffset: ctx.origin.fileOffset },
    cause === undefined ? undefined : { cause },
  );
}

export function bytesOf(view: ArrayBuffer | Uint8Array): Uint8Array {
  return view instanceof Uint8Array ? view : new Uint8Array(view);
}

/** An attribute value read by asn1js (which accepted it with the rest of the attributes). */
export const tree = (value: Der | undefined): asn1js.AsnType | undefined => value && lib.asn1js().fromBER(value.whole).result;

/**
 * asn1js's reading of one part of the blob. The whole blob used to go through asn1js: every part is still read by it
 * (or by the certificate cache) once, so what it refused is still refused.
 * @throws FormatError SG_ERR_AC_BAD_SIGNATURE when asn1js refuses the part
 */
export function asn(ctx: Context, element: Der): asn1js.AsnType {
  return parseBer(element.whole, ctx.origin, ctx.limits);
}

/** Parts nothing reads, passed through asn1js all the same (asn1-accept.ts knows the answer for most). */
export function accept(ctx: Context, elements: ReadonlyArray<Der | undefined>): void {
  for (const e of elements) if (e && !asn1jsAccepts(e)) asn(ctx, e);
}

export function oidOf(ctx: Context, element: Der): string {
  return oidString(element) ?? (asn(ctx, element) as asn1js.ObjectIdentifier).valueBlock.toString();
}

export const childrenOf = (e: Der | undefined, tag: number): Der[] => (e?.tag === tag ? derChildren(e) : []);

/** The DER an asn1js element was read from. */
export const der = (e: asn1js.AsnType) => bytesOf(e.valueBeforeDecodeView);

export const is = <T extends abstract new (...args: never[]) => asn1js.AsnType>(e: unknown, type: T, constructed: boolean): e is InstanceType<T> =>
  e instanceof type && (e as asn1js.AsnType).idBlock.isConstructed === constructed;

/** AlgorithmIdentifier { algorithm, parameters ANY OPTIONAL }: the OID, or null for another shape. */
export function algorithmOf(e: asn1js.AsnType | undefined): string | null {
  const f = is(e, lib.asn1js().Sequence, true) ? e.valueBlock.value : [];
  return (f.length === 1 || f.length === 2) && is(f[0], lib.asn1js().ObjectIdentifier, false) ? f[0].valueBlock.toString() : null;
}

/** Name: SEQUENCE OF SET OF { type OID, value }. */
export function isName(e: asn1js.AsnType | undefined): boolean {
  const A = lib.asn1js();
  return (
    is(e, A.Sequence, true) &&
    e.valueBlock.value.every(
      (rdn) =>
        is(rdn, A.Set, true) &&
        rdn.valueBlock.value.length > 0 &&
        rdn.valueBlock.value.every(
          (atv) => is(atv, A.Sequence, true) && atv.valueBlock.value.length === 2 && is(atv.valueBlock.value[0], A.ObjectIdentifier, false),
        ),
    )
  );
}

/** algorithmOf over the DER: the OID, or null for another shape. */
export function algorithmOfDer(e: Der | undefined): string | null {
  const f = childrenOf(e, DerTag.sequence);
  return (f.length === 1 || f.length === 2) && f[0]!.tag === DerTag.oid ? (oidString(f[0]!) ?? null) : null;
}

/** isName over the DER. */
export const isNameDer = (e: Der | undefined): boolean =>
  e?.tag === DerTag.sequence &&
  derChildren(e).every((rdn) => {
    const atvs = childrenOf(rdn, DerTag.set);
    return (
      atvs.length > 0 &&
      atvs.every((atv) => {
        const pair = childrenOf(atv, DerTag.sequence);
        return pair.length === 2 && pair[0]!.tag === DerTag.oid;
      })
    );
  });
