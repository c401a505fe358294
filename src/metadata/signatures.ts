// Member and type signatures (ECMA-335 II.23.2.1 MethodDefSig/MethodRefSig, II.23.2.12 Type, II.23.1.16 element types).
// Only what custom attributes need is described in detail; everything else is parsed to be skipped safely.
import { ByteCursor } from '../binary/byte-cursor.js';
import { FormatError, hex } from '../core/errors.js';
import { CodedIndex } from './schema.js';

export const ElementType = {
  End: 0x00,
  Void: 0x01,
  Boolean: 0x02,
  Char: 0x03,
  I1: 0x04,
  U1: 0x05,
  I2: 0x06,
  U2: 0x07,
  I4: 0x08,
  U4: 0x09,
  I8: 0x0a,
  U8: 0x0b,
  R4: 0x0c,
  R8: 0x0d,
  String: 0x0e,
  Ptr: 0x0f,
  ByRef: 0x10,
  ValueType: 0x11,
  Class: 0x12,
  Var: 0x13,
  Array: 0x14,
  GenericInst: 0x15,
  TypedByRef: 0x16,
  I: 0x18,
  U: 0x19,
  FnPtr: 0x1b,
  Object: 0x1c,
  SzArray: 0x1d,
  MVar: 0x1e,
  CModReqd: 0x1f,
  CModOpt: 0x20,
  Sentinel: 0x41,
  Pinned: 0x45,
  // Custom-attribute-only encodings (II.23.3)
  SystemType: 0x50,
  Boxed: 0x51,
  Field: 0x53,
  Property: 0x54,
  Enum: 0x55,
} as const;

/** A coded TypeDefOrRefOrSpec reference (II.23.2.8). */
export interface TypeHandle {
  readonly table: number;
  readonly rid: number;
}

export type TypeSig =
  | { readonly kind: 'primitive'; readonly elementType: number }
  | { readonly kind: 'string' }
  | { readonly kind: 'object' }
  | { readonly kind: 'class' | 'valuetype'; readonly type: TypeHandle }
  | { readonly kind: 'szarray'; readonly element: TypeSig }
  | { readonly kind: 'genericinst'; readonly generic: TypeSig; readonly args: readonly TypeSig[] }
  | { readonly kind: 'other'; readonly elementType: number };

export interface MethodSignature {
  readonly callingConvention: number;
  readonly hasThis: boolean;
  readonly explicitThis: boolean;
  readonly generic: boolean;
  readonly genericParamCount: number;
  readonly returnType: TypeSig;
  readonly parameters: readonly TypeSig[];
  /** True when the signature used custom modifiers anywhere. */
  readonly hasCustomModifiers: boolean;
  /** Exact bytes of the blob. */
  readonly bytes: Uint8Array;
}

export const CallingConvention = { Default: 0x0, VarArg: 0x5, Generic: 0x10, HasThis: 0x20, ExplicitThis: 0x40 } as const;

/** Deeper nesting than this is not produced by any compiler and would only exhaust the stack. */
const MAX_TYPE_DEPTH = 64;
/** Parameters per method: the compressed count allows 2^29. */
const MAX_PARAMETERS = 0xffff;

function sigError(c: ByteCursor, message: string): FormatError {
  return new FormatError('SG_ERR_MD_BAD_SIGNATURE_BLOB', `${message} at ${hex(c.position + c.fileOffsetBase)}`, {
    structure: c.structure,
    fileOffset: c.position + c.fileOffsetBase,
  });
}

export function readTypeDefOrRefEncoded(c: ByteCursor): TypeHandle {
  const value = c.compressedU32();
  const tables = CodedIndex.TypeDefOrRef.tables;
  return { table: tables[value & 3] ?? -1, rid: value >>> 2 };
}

class SigReader {
  customModifiers = false;
  constructor(readonly c: ByteCursor) {}

  type(depth = 0): TypeSig {
    if (depth > MAX_TYPE_DEPTH) throw sigError(this.c, `type signature nested deeper than ${MAX_TYPE_DEPTH}`);
    const et = this.c.u8();
    switch (et) {
      case ElementType.Void:
      case ElementType.Boolean:
      case ElementType.Char:
      case ElementType.I1:
      case ElementType.U1:
      case ElementType.I2:
      case ElementType.U2:
      case ElementType.I4:
      case ElementType.U4:
      case ElementType.I8:
      case ElementType.U8:
      case ElementType.R4:
      case ElementType.R8:
      case ElementType.I:
      case ElementType.U:
      case ElementType.TypedByRef:
        return { kind: 'primitive', elementType: et };
      case ElementType.String:
        return { kind: 'string' };
      case ElementType.Object:
        return { kind: 'object' };
      case ElementType.Class:
        return { kind: 'class', type: readTypeDefOrRefEncoded(this.c) };
      case ElementType.ValueType:
        return { kind: 'valuetype', type: readTypeDefOrRefEncoded(this.c) };
      case ElementType.SzArray:
        return { kind: 'szarray', element: this.type(depth + 1) };
      case ElementType.Ptr:
      case ElementType.ByRef:
      case ElementType.Pinned:
        this.type(depth + 1);
        return { kind: 'other', elementType: et };
      case ElementType.CModReqd:
      case ElementType.CModOpt:
        this.customModifiers = true;
        readTypeDefOrRefEncoded(this.c);
        return this.type(depth + 1);
      case ElementType.Var:
      case ElementType.MVar:
        this.c.compressedU32();
        return { kind: 'other', elementType: et };
      case ElementType.Array: {
        this.type(depth + 1);
        this.c.compressedU32(); // rank
        const sizes = this.c.compressedU32();
        if (sizes > this.c.remaining) throw sigError(this.c, `array shape lists ${sizes} sizes`);
        for (let i = 0; i < sizes; i++) this.c.compressedU32();
        const bounds = this.c.compressedU32();
        if (bounds > this.c.remaining) throw sigError(this.c, `array shape lists ${bounds} lower bounds`);
        for (let i = 0; i < bounds; i++) this.c.compressedU32();
        return { kind: 'other', elementType: et };
      }
      case ElementType.GenericInst: {
        const generic = this.type(depth + 1);
        const count = this.c.compressedU32();
        if (count > this.c.remaining) throw sigError(this.c, `generic instantiation with ${count} arguments`);
        const args: TypeSig[] = [];
        for (let i = 0; i < count; i++) args.push(this.type(depth + 1));
        return { kind: 'genericinst', generic, args };
      }
      case ElementType.FnPtr:
        this.method(depth + 1);
        return { kind: 'other', elementType: et };
      default:
        throw sigError(this.c, `unknown element type ${hex(et)} in a signature`);
    }
  }

  method(depth = 0, start = this.c.position): MethodSignature {
    const callingConvention = this.c.u8();
    const generic = (callingConvention & CallingConvention.Generic) !== 0;
    const genericParamCount = generic ? this.c.compressedU32() : 0;
    const count = this.c.compressedU32();
    if (count > MAX_PARAMETERS || count > this.c.remaining) throw sigError(this.c, `method signature declares ${count} parameters`);
    const returnType = this.type(depth + 1);
    const parameters: TypeSig[] = [];
    for (let i = 0; i < count; i++) {
      if (this.c.remaining > 0 && this.c.bytes[this.c.position] === ElementType.Sentinel) this.c.skip(1);
      parameters.push(this.type(depth + 1));
    }
    return {
      callingConvention,
      hasThis: (callingConvention & CallingConvention.HasThis) !== 0,
      explicitThis: (callingConvention & CallingConvention.ExplicitThis) !== 0,
      generic,
      genericParamCount,
      returnType,
      parameters,
      hasCustomModifiers: this.customModifiers,
      bytes: this.c.bytes.subarray(start, this.c.position),
    };
  }
}

/**
 * Parses a MethodDefSig or MethodRefSig blob.
 * @throws FormatError SG_ERR_MD_BAD_SIGNATURE_BLOB, SG_ERR_MD_BAD_COMPRESSED_INT, SG_ERR_MD_TRUNCATED
 */
export function parseMethodSignature(blob: ByteCursor): MethodSignature {
  // Built as one literal: an object spread here cost more than the whole parse (V8, Node 20).
  return new SigReader(blob).method();
}

/** Parses a single Type (a TypeSpec blob or a field's type after its 0x06 prolog). */
export function parseTypeSignature(blob: ByteCursor): TypeSig {
  return new SigReader(blob).type();
}
