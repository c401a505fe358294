// Legal but hostile assemblies: each is valid metadata that makes a naive reader do unbounded work.
// Built from assemblies/delay-1024.dll (its PE, CLI header, signature slot and public key) with new metadata.
import { readModule } from '../../src/strongname/well-formed.js';
import { TableId } from '../../src/metadata/schema.js';
import { fixture } from './fixtures.js';
import { BlobsBuilder, StringsBuilder, buildMetadata, coded, compressedU32, withMetadata, type MetadataSpec } from './metadata-image.js';

const BASE = 'assemblies/delay-1024.dll';
const MiB = 1024 * 1024;

/** HASTHIS, no parameters, void (a .ctor()). */
const CTOR_NO_ARGS = Uint8Array.of(0x20, 0x00, 0x01);
/** HASTHIS, one string parameter, void (a .ctor(string)). */
const CTOR_STRING = Uint8Array.of(0x20, 0x01, 0x01, 0x0e);
/** The nil-argument value blob: prolog 0x0001 and no named arguments. */
const NO_ARGS_VALUE = Uint8Array.of(0x01, 0x00, 0x00, 0x00);

/** Module, Assembly (with delay-1024's public key) and two TypeDefs: <Module> and Test.HostileAttribute. */
function skeleton(strings: StringsBuilder, blobs: BlobsBuilder, methodList: number) {
  const publicKey = readModule(fixture(BASE)).assembly!.publicKey;
  return {
    [TableId.Module]: [{ name: strings.add('Hostile.dll'), mvid: 1 }],
    [TableId.TypeDef]: [
      { typeName: strings.add('<Module>'), fieldList: 1, methodList },
      { flags: 0x100001, typeName: strings.add('HostileAttribute'), typeNamespace: strings.add('Test'), fieldList: 1, methodList },
    ],
    [TableId.Assembly]: [{ hashAlgId: 0x8004, majorVersion: 1, flags: 0x0001, publicKey: blobs.add(publicKey), name: strings.add('Hostile') }],
  };
}

function image(spec: MetadataSpec): Uint8Array {
  return withMetadata(fixture(BASE), buildMetadata(spec));
}

/**
 * Shape 14: `references` AssemblyRef names and as many TypeRef names that all point into one run of
 * `runBytes` letters in #Strings, each at its own offset. Each name is legal (strings may share tails),
 * and each is almost `runBytes` long.
 */
export function sharedStringTails(references = 600, runBytes = MiB): Uint8Array {
  const strings = new StringsBuilder();
  const blobs = new BlobsBuilder();
  const base = skeleton(strings, blobs, 1);
  const run = strings.raw(Buffer.from('A'.repeat(runBytes) + '\0', 'latin1'));
  const assemblyRefs = Array.from({ length: references }, (_, i) => ({ majorVersion: 1, name: run + i }));
  const typeRefs = Array.from({ length: references }, (_, i) => ({
    resolutionScope: coded('ResolutionScope', TableId.AssemblyRef, i + 1),
    typeName: run + references + i,
  }));
  return image({
    strings: strings.bytes(),
    blobs: blobs.bytes(),
    rows: { ...base, [TableId.TypeRef]: typeRefs, [TableId.AssemblyRef]: assemblyRefs },
  });
}

/**
 * Shape 15: an uncompressed #- stream with `count` MethodDefs reached through a MethodPtr table in reverse
 * order, and `count` assembly attributes, one per constructor. A reader that searches MethodPtr for each
 * attribute's constructor does count * count / 2 row reads.
 */
export function methodPtrAttributes(count = 30_000): Uint8Array {
  const strings = new StringsBuilder();
  const blobs = new BlobsBuilder();
  const base = skeleton(strings, blobs, 1);
  const ctor = strings.add('.ctor');
  const signature = blobs.add(CTOR_NO_ARGS);
  const value = blobs.add(NO_ARGS_VALUE);
  const methods = Array.from({ length: count }, () => ({ flags: 0x1886, name: ctor, signature, paramList: 1 }));
  const methodPtr = Array.from({ length: count }, (_, i) => ({ method: count - i }));
  const attributes = Array.from({ length: count }, (_, i) => ({
    parent: coded('HasCustomAttribute', TableId.Assembly, 1),
    type: coded('CustomAttributeType', TableId.MethodDef, i + 1),
    value,
  }));
  return image({
    tableStream: '#-',
    strings: strings.bytes(),
    blobs: blobs.bytes(),
    rows: { ...base, [TableId.MethodPtr]: methodPtr, [TableId.MethodDef]: methods, [TableId.CustomAttribute]: attributes },
  });
}

/**
 * Shape 16: `count` assembly attributes whose value is one shared blob holding a string of `stringBytes`
 * letters. Each attribute is legal; described naively, the string is decoded and printed `count` times.
 */
export function sharedAttributeBlob(count = 1_500, stringBytes = MiB): Uint8Array {
  const strings = new StringsBuilder();
  const blobs = new BlobsBuilder();
  const base = skeleton(strings, blobs, 1);
  const ctor = blobs.add(CTOR_STRING);
  const ctorName = strings.add('.ctor');
  const text = Buffer.from('x'.repeat(stringBytes), 'latin1');
  const value = blobs.add(Buffer.concat([Uint8Array.of(0x01, 0x00), compressedU32(stringBytes), text, Uint8Array.of(0x00, 0x00)]));
  const attributes = Array.from({ length: count }, () => ({
    parent: coded('HasCustomAttribute', TableId.Assembly, 1),
    type: coded('CustomAttributeType', TableId.MethodDef, 1),
    value,
  }));
  return image({
    strings: strings.bytes(),
    blobs: blobs.bytes(),
    rows: {
      ...base,
      [TableId.MethodDef]: [{ flags: 0x1886, name: ctorName, signature: ctor, paramList: 1 }],
      [TableId.CustomAttribute]: attributes,
    },
  });
}
