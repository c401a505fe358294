// Custom attribute value blobs (ECMA-335 II.23.3; strong-naming.md section 4.1).
// The number and types of fixed arguments come from the constructor signature, not from the blob.
import { ByteCursor } from '../binary/byte-cursor.js';
import { FormatError, hex } from '../core/errors.js';
import { ElementType, type TypeSig } from './signatures.js';

/** A decoded argument value. 64-bit integers become decimal strings so that JSON keeps them exact. */
export type AttributeValue = boolean | number | string | null | AttributeValue[];

export interface AttributeArgument {
  /** `bool`, `int32`, `string`, `type`, `enum <Name>`, `int32[]`, … */
  readonly type: string;
  readonly value: AttributeValue;
}

export interface NamedAttributeArgument extends AttributeArgument {
  readonly kind: 'field' | 'property';
  readonly name: string;
}

export interface DecodedAttributeValue {
  readonly fixedArguments: readonly AttributeArgument[];
  readonly namedArguments: readonly NamedAttributeArgument[];
}

/**
 * What the decoder needs to know about a constructor parameter that is not a primitive:
 * whether a class is System.Type, and an enum's underlying element type (undefined when the enum
 * is defined in another assembly and so unknown).
 */
export interface AttributeTypeResolver {
  /** Full name of the type a class/valuetype handle refers to. */
  typeName(sig: TypeSig & { kind: 'class' | 'valuetype' }): string;
  /** Underlying element type of an enum defined in this module, or undefined. */
  enumUnderlyingType(sig: TypeSig & { kind: 'class' | 'valuetype' }): number | undefined;
}

/**
 * Turns the UTF-8 bytes of a SerString at `fileOffset` into a string. ModuleMetadata passes one that caches
 * by file offset and charges its budget: attributes that share a value blob then share its strings.
 */
export type SerStringDecoder = (utf8: Uint8Array, fileOffset: number) => string;

const utf8Decoder = new TextDecoder('utf-8', { ignoreBOM: true }); // keeps a leading BOM, as Buffer's toString does
const decodeFresh: SerStringDecoder = (utf8) => utf8Decoder.decode(utf8);

/** What one decoding attempt carries down the recursion. */
interface DecodeContext {
  /** Underlying type assumed for enums defined in other assemblies. */
  readonly enumGuess: number;
  readonly decodeString: SerStringDecoder;
}

/** Cap on array elements so a lying count cannot drive a huge loop. */
const MAX_ARRAY_ELEMENTS = 1 << 20;

const PRIMITIVE_NAMES: Record<number, string> = {
  [ElementType.Boolean]: 'bool',
  [ElementType.Char]: 'char',
  [ElementType.I1]: 'int8',
  [ElementType.U1]: 'uint8',
  [ElementType.I2]: 'int16',
  [ElementType.U2]: 'uint16',
  [ElementType.I4]: 'int32',
  [ElementType.U4]: 'uint32',
  [ElementType.I8]: 'int64',
  [ElementType.U8]: 'uint64',
  [ElementType.R4]: 'float32',
  [ElementType.R8]: 'float64',
  [ElementType.String]: 'string',
};

/** An element type with an enum or System.Type tag, as ctor params and named args describe it. */
type ArgType =
  | { readonly et: number; readonly name: string }
  | { readonly et: typeof ElementType.Enum; readonly name: string; readonly underlying: number | undefined }
  | { readonly et: typeof ElementType.SzArray; readonly name: string; readonly element: ArgType };

function caError(c: ByteCursor, message: string): FormatError {
  return new FormatError('SG_ERR_MD_BAD_ATTRIBUTE', `${message} at ${hex(c.position + c.fileOffsetBase)}`, {
    structure: 'custom attribute value',
    fileOffset: c.position + c.fileOffsetBase,
  });
}

function fromSig(sig: TypeSig, resolver: AttributeTypeResolver, c: ByteCursor): ArgType {
  switch (sig.kind) {
    case 'primitive': {
      const name = PRIMITIVE_NAMES[sig.elementType];
      if (!name) throw caError(c, `constructor parameter of element type ${hex(sig.elementType)} cannot appear in an attribute`);
      return { et: sig.elementType, name };
    }
    case 'string':
      return { et: ElementType.String, name: 'string' };
    case 'object':
      return { et: ElementType.Boxed, name: 'object' };
    case 'class': {
      const name = resolver.typeName(sig);
      if (name !== 'System.Type') throw caError(c, `constructor parameter of class ${name} cannot appear in an attribute`);
      return { et: ElementType.SystemType, name: 'type' };
    }
    case 'valuetype': {
      const name = resolver.typeName(sig);
      return { et: ElementType.Enum, name: `enum ${name}`, underlying: resolver.enumUnderlyingType(sig) };
    }
    case 'szarray': {
      const element = fromSig(sig.element, resolver, c);
      return { et: ElementType.SzArray, name: `${element.name}[]`, element };
    }
    default:
      throw caError(c, 'constructor parameter type cannot appear in an attribute');
  }
}

/** SerString: compressed length or 0xFF for null, then UTF-8. */
function readSerString(c: ByteCursor, decodeString: SerStringDecoder): string | null {
  if (c.remaining > 0 && c.bytes[c.position] === 0xff) {
    c.skip(1);
    return null;
  }
  const length = c.compressedU32();
  const fileOffset = c.position + c.fileOffsetBase;
  return decodeString(c.bytesView(length), fileOffset);
}

/** FieldOrPropType as written in named arguments and boxed values (II.23.3). */
function readFieldOrPropType(c: ByteCursor, depth: number, ctx: DecodeContext): ArgType {
  if (depth > 8) throw caError(c, 'attribute argument type nested too deeply');
  const et = c.u8();
  if (PRIMITIVE_NAMES[et]) return { et, name: PRIMITIVE_NAMES[et]! };
  switch (et) {
    case ElementType.SystemType:
      return { et, name: 'type' };
    case ElementType.Boxed:
      return { et, name: 'object' };
    case ElementType.SzArray: {
      const element = readFieldOrPropType(c, depth + 1, ctx);
      return { et, name: `${element.name}[]`, element };
    }
    case ElementType.Enum: {
      const name = readSerString(c, ctx.decodeString) ?? '';
      // The enum's assembly-qualified name is given, but not its underlying type.
      return { et, name: `enum ${name.split(',')[0]}`, underlying: undefined };
    }
    default:
      throw caError(c, `unknown attribute argument type ${hex(et)}`);
  }
}

function integer(c: ByteCursor, et: number): number | string {
  switch (et) {
    case ElementType.I1:
      return c.i8();
    case ElementType.U1:
      return c.u8();
    case ElementType.I2:
      return c.i16();
    case ElementType.U2:
    case ElementType.Char:
      return c.u16();
    case ElementType.I4:
      return c.i32();
    case ElementType.U4:
      return c.u32();
    case ElementType.I8:
      return c.i64().toString();
    case ElementType.U8:
      return c.u64().toString();
    default:
      throw caError(c, `element type ${hex(et)} is not an integer`);
  }
}

/** Underlying types tried, in order, for an enum defined in another assembly. */
const ENUM_GUESSES = [ElementType.I4, ElementType.I1, ElementType.I2, ElementType.I8];

function readElem(c: ByteCursor, type: ArgType, depth: number, ctx: DecodeContext): AttributeValue {
  if (depth > 8) throw caError(c, 'attribute argument nested too deeply');
  switch (type.et) {
    case ElementType.Boolean: {
      const b = c.u8();
      if (b > 1) throw caError(c, `bool argument has the value ${b}`);
      return b === 1;
    }
    case ElementType.R4:
      return c.f32();
    case ElementType.R8:
      return c.f64();
    case ElementType.String:
    case ElementType.SystemType:
      return readSerString(c, ctx.decodeString);
    case ElementType.Boxed:
      return readElem(c, readFieldOrPropType(c, depth + 1, ctx), depth + 1, ctx);
    case ElementType.Enum: {
      // An enum from another assembly: its size is not in this file, so the caller guesses.
      const underlying = ('underlying' in type ? type.underlying : undefined) ?? ctx.enumGuess;
      return integer(c, underlying);
    }
    case ElementType.SzArray: {
      const count = c.u32();
      if (count === 0xffffffff) return null;
      if (count > MAX_ARRAY_ELEMENTS || count > c.remaining) throw caError(c, `array argument claims ${count} elements`);
      const element = (type as { element: ArgType }).element;
      const out: AttributeValue[] = [];
      for (let i = 0; i < count; i++) out.push(readElem(c, element, depth + 1, ctx));
      return out;
    }
    default:
      return integer(c, type.et);
  }
}

/**
 * Decodes a CustomAttrib blob given the constructor's parameter types. An enum whose definition is in
 * another assembly has an unknown size: int32 is tried first (nearly every enum), then 1, 2 and 8 bytes;
 * the first size with which the whole blob decodes exactly wins.
 * @throws FormatError SG_ERR_MD_BAD_ATTRIBUTE, SG_ERR_MD_TRUNCATED, SG_ERR_MD_BAD_COMPRESSED_INT, and
 * SG_ERR_MD_BUDGET from `decodeString`
 */
export function decodeCustomAttributeValue(
  blob: ByteCursor,
  parameters: readonly TypeSig[],
  resolver: AttributeTypeResolver,
  decodeString: SerStringDecoder = decodeFresh,
): DecodedAttributeValue {
  if (blob.remaining === 0) return { fixedArguments: [], namedArguments: [] }; // nil blob (II.22.10)
  const types = parameters.map((p) => fromSig(p, resolver, blob));
  const attempt = (enumGuess: number) => decodeWith(blob.slice(blob.position, blob.remaining), types, { enumGuess, decodeString });
  if (!hasUnknownEnum(types)) return attempt(ENUM_GUESSES[0]!);
  // Every wrong guess ends in an error that is thrown away; without stack traces those cost a tenth. When no guess
  // fits, the first guess is decoded once more to throw its error with a stack (decoding is deterministic, and the
  // strings it reads are cached by the decoder, so the second run charges no budget again).
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    for (const guess of ENUM_GUESSES) {
      try {
        return attempt(guess);
      } catch (error) {
        // A spent budget stays spent whatever the enum size: another guess would only charge it again.
        if ((error as { code?: unknown }).code === 'SG_ERR_MD_BUDGET') throw error;
      }
    }
  } finally {
    Error.stackTraceLimit = limit;
  }
  return attempt(ENUM_GUESSES[0]!);
}

function hasUnknownEnum(types: readonly ArgType[]): boolean {
  return types.some(
    (t) =>
      (t.et === ElementType.Enum && 'underlying' in t && t.underlying === undefined) ||
      (t.et === ElementType.SzArray && 'element' in t && hasUnknownEnum([t.element])),
  );
}

function decodeWith(c: ByteCursor, types: readonly ArgType[], ctx: DecodeContext): DecodedAttributeValue {
  const prolog = c.u16();
  if (prolog !== 0x0001) throw caError(c, `custom attribute prolog is ${hex(prolog)}, not 0x0001`);
  const fixedArguments = types.map((type) => ({ type: type.name, value: readElem(c, type, 0, ctx) }));
  const namedCount = c.u16();
  const namedArguments: NamedAttributeArgument[] = [];
  for (let i = 0; i < namedCount; i++) {
    const kindByte = c.u8();
    if (kindByte !== ElementType.Field && kindByte !== ElementType.Property) {
      throw caError(c, `named argument kind ${hex(kindByte)} is neither FIELD (0x53) nor PROPERTY (0x54)`);
    }
    const type = readFieldOrPropType(c, 0, ctx);
    const name = readSerString(c, ctx.decodeString) ?? '';
    namedArguments.push({ kind: kindByte === ElementType.Field ? 'field' : 'property', name, type: type.name, value: readElem(c, type, 0, ctx) });
  }
  if (c.remaining !== 0) throw caError(c, `${c.remaining} bytes follow the last named argument`);
  return { fixedArguments, namedArguments };
}
