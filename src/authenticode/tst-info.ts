// An RFC 3161 TSTInfo (2.4.2): the message imprint and the time. Read over the DER when asn1js is known to accept it
// and its shape is the usual one, else from the asn1js tree, else by pkijs.
import type * as asn1js from 'asn1js';
import type * as pkijs from 'pkijs';
import { FormatError } from '../core/errors.js';
import { asn1jsAccepts, timeValue } from './asn1-accept.js';
import { algorithmOf, algorithmOfDer, childrenOf, type Context, is, isName, isNameDer, malformed } from './asn1-read.js';
import { parseBer, scanBer } from './ber-guard.js';
import { derAt, derChildren, DerTag, type Der } from './der.js';
import * as lib from './libraries.js';

/** What is read of an RFC 3161 TSTInfo. */
interface TimestampFields {
  readonly imprintAlgorithm: string;
  readonly imprint: Buffer;
  readonly genTime: Date;
}

const pkijsTimestampFields = (tst: pkijs.TSTInfo): TimestampFields => ({
  imprintAlgorithm: tst.messageImprint.hashAlgorithm.algorithmId,
  imprint: Buffer.from(tst.messageImprint.hashedMessage.valueBlock.valueHexView),
  genTime: tst.genTime,
});

/**
 * A TSTInfo of the usual shape (RFC 3161 2.4.2: accuracy, ordering, nonce and a directoryName tsa at most, no
 * extensions), read from the asn1js tree: a shape pkijs's schema accepts, without its cost. Null for any other shape.
 */
function timestampFieldsOf(e: asn1js.AsnType): TimestampFields | null {
  const A = lib.asn1js();
  const f = is(e, A.Sequence, true) ? e.valueBlock.value : [];
  const [version, policy, messageImprint, serial, genTime] = f;
  const [algorithm, imprint, ...more] = is(messageImprint, A.Sequence, true) ? messageImprint.valueBlock.value : [];
  const imprintAlgorithm = algorithmOf(algorithm);
  if (!is(version, A.Integer, false) || !is(policy, A.ObjectIdentifier, false) || !imprintAlgorithm || !is(imprint, A.OctetString, false) || more.length > 0)
    return null;
  if (!is(serial, A.Integer, false) || !is(genTime, A.GeneralizedTime, false)) return null;
  let at = 5;
  const optional = (test: (x: asn1js.AsnType | undefined) => boolean) => test(f[at]) && ++at;
  const context = (x: asn1js.AsnType | undefined, tag: number, constructed: boolean) =>
    x?.idBlock.tagClass === 3 && x.idBlock.tagNumber === tag && x.idBlock.isConstructed === constructed;
  optional((x) => {
    // Accuracy { seconds INTEGER OPTIONAL, millis [0] OPTIONAL, micros [1] OPTIONAL }
    const a = is(x, A.Sequence, true) ? x.valueBlock.value : null;
    let i = 0;
    if (a && is(a[i], A.Integer, false)) i++;
    if (a && context(a[i], 0, false)) i++;
    if (a && context(a[i], 1, false)) i++;
    return a !== null && i === a.length;
  });
  optional((x) => is(x, A.Boolean, false));
  optional((x) => is(x, A.Integer, false));
  optional((x) => {
    // tsa [0] GeneralName: directoryName [4] Name
    const names = context(x, 0, true) ? (x as asn1js.Constructed).valueBlock.value : [];
    const name = names[0];
    return (
      names.length === 1 &&
      context(name, 4, true) &&
      (name as asn1js.Constructed).valueBlock.value.length === 1 &&
      isName((name as asn1js.Constructed).valueBlock.value[0])
    );
  });
  if (at !== f.length) return null;
  return { imprintAlgorithm, imprint: Buffer.from(imprint.valueBlock.valueHexView), genTime: genTime.toDate() };
}

/**
 * timestampFieldsOf over the DER of a TSTInfo that asn1js is known to accept (short tags only: each identifier
 * octet tested is the asn1js class and form timestampFieldsOf tests). Null for any other shape or time form.
 */
function timestampFieldsOfDer(e: Der): TimestampFields | null {
  const f = childrenOf(e, DerTag.sequence);
  const [version, policy, messageImprint, serial, genTime] = f;
  const [algorithm, imprint, ...more] = childrenOf(messageImprint, DerTag.sequence);
  const imprintAlgorithm = algorithmOfDer(algorithm);
  if (version?.tag !== DerTag.integer || policy?.tag !== DerTag.oid || !imprintAlgorithm || imprint?.tag !== DerTag.octetString || more.length > 0) return null;
  const time = genTime?.tag === DerTag.generalizedTime ? timeValue(genTime) : undefined;
  if (serial?.tag !== DerTag.integer || !time) return null;
  let at = 5;
  const optional = (test: (x: Der | undefined) => boolean) => test(f[at]) && ++at;
  optional((x) => {
    // Accuracy { seconds INTEGER OPTIONAL, millis [0] OPTIONAL, micros [1] OPTIONAL }
    const a = x?.tag === DerTag.sequence ? derChildren(x) : null;
    let i = 0;
    if (a && a[i]?.tag === DerTag.integer) i++;
    if (a && a[i]?.tag === 0x80) i++;
    if (a && a[i]?.tag === 0x81) i++;
    return a !== null && i === a.length;
  });
  optional((x) => x?.tag === DerTag.boolean);
  optional((x) => x?.tag === DerTag.integer);
  optional((x) => {
    // tsa [0] GeneralName: directoryName [4] Name
    const names = childrenOf(x, DerTag.context0);
    const name = childrenOf(names[0], 0xa4);
    return names.length === 1 && name.length === 1 && isNameDer(name[0]);
  });
  if (at !== f.length) return null;
  return { imprintAlgorithm, imprint: Buffer.from(imprint.content.buffer, imprint.content.byteOffset, imprint.content.length), genTime: time };
}

/**
 * The TSTInfo of a timestamp token, from the content of its OCTET STRING.
 * @throws FormatError SG_ERR_AC_BAD_SIGNATURE, SG_ERR_AC_BUDGET
 */
export function readTstInfo(ctx: Context, tstBytes: Uint8Array): TimestampFields {
  let tst: TimestampFields;
  try {
    const origin = { structure: `${ctx.origin.structure} TSTInfo`, fileOffset: -1 };
    const element = derAt(tstBytes.subarray(0, scanBer(tstBytes, origin, ctx.limits)));
    const known = asn1jsAccepts(element) ? timestampFieldsOfDer(element) : null;
    if (known) tst = known;
    else {
      const parsed = parseBer(tstBytes, origin, ctx.limits);
      tst = timestampFieldsOf(parsed) ?? pkijsTimestampFields(new (lib.pkijs().TSTInfo)({ schema: parsed }));
    }
  } catch (error) {
    if (error instanceof FormatError) throw error;
    throw malformed(ctx, 'the RFC 3161 TSTInfo cannot be read', error);
  }
  return tst;
}
