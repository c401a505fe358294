import { describe, expect, test } from 'vitest';
import { ModuleMetadata, formatVersion } from '../../src/metadata/module-metadata.js';
import { TableId } from '../../src/metadata/schema.js';
import { parsePeImage } from '../../src/pe/pe-image.js';
import { referenceToken } from '../../src/strongname/key-token.js';
import { fixture } from '../helpers/fixtures.js';

const load = (name: string) => new ModuleMetadata(parsePeImage(fixture(name)));

describe('metadata of an mcs library', () => {
  const md = load('assemblies/delay-1024.dll');

  test('root, streams and identity', () => {
    expect(md.root.version).toBe('v4.0.30319');
    expect(md.root.streams.map((s) => s.name)).toEqual(['#~', '#Strings', '#US', '#GUID', '#Blob']);
    const a = md.assembly!;
    expect(a.name).toBe('delay-1024');
    expect(formatVersion(a.version)).toBe('1.2.3.4');
    expect(a.culture).toBe('');
    expect(a.hashAlgId).toBe(0x8004);
    expect(a.publicKey.length).toBe(160);
    expect(md.moduleName).toBe('delay-1024.dll');
    expect(md.mvid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });

  test('AssemblyRef to mscorlib carries the ECMA token', () => {
    const refs = md.assemblyReferences;
    const mscorlib = refs.find((r) => r.name === 'mscorlib')!;
    expect(formatVersion(mscorlib.version)).toBe('4.0.0.0');
    expect(referenceToken(mscorlib.publicKeyOrToken, mscorlib.flags)).toBe('b77a5c561934e089');
  });

  test('type names: nesting joined with /, defining scope resolved', () => {
    const names = Array.from({ length: md.tables.rowCount(TableId.TypeDef) }, (_, i) => md.typeDefFullName(i + 1));
    expect(names).toEqual(
      expect.arrayContaining(['<Module>', 'SG.Test.Outer', 'SG.Test.Outer/Inner', 'SG.Test.Outer/Inner/Deepest', 'SG.Test.Outer/Inner/MarkAttribute']),
    );
    const title = md.assemblyAttributes.find((a) => a.typeName === 'System.Reflection.AssemblyTitleAttribute')!;
    expect(title.origin).toEqual({ kind: 'assembly', name: 'mscorlib', assemblyRef: expect.any(Number) });
    const mark = md.assemblyAttributes.find((a) => a.typeName.endsWith('MarkAttribute'))!;
    expect(mark.origin).toEqual({ kind: 'this-module' });
  });

  test('attribute on the assembly via MethodDef: Flag(true, Note = "hi")', () => {
    const flag = md.assemblyAttributes.find((a) => a.typeName === 'SG.Test.FlagAttribute')!;
    expect(Buffer.from(md.attributeValue(flag)).toString('hex')).toBe('0100010100530e044e6f7465026869');
    const ctor = md.attributeConstructor(flag);
    expect(ctor.name).toBe('.ctor');
    expect(Buffer.from(ctor.signature.bytes).toString('hex')).toBe('20010102');
    expect(md.decodeAttribute(flag)).toEqual({
      fixedArguments: [{ type: 'bool', value: true }],
      namedArguments: [{ kind: 'field', name: 'Note', type: 'string', value: 'hi' }],
    });
  });

  test('attribute with a local byte enum, a Type, a params array and a boxed long', () => {
    const T = TableId.TypeDef;
    const outer = Array.from({ length: md.tables.rowCount(T) }, (_, i) => i + 1).find((rid) => md.typeDefFullName(rid) === 'SG.Test.Outer')!;
    const [level] = md.customAttributesOf(T, outer);
    expect(level!.typeName).toBe('SG.Test.LevelAttribute');
    expect(md.decodeAttribute(level!)).toEqual({
      fixedArguments: [
        { type: 'enum SG.Test.Level', value: 2 },
        { type: 'type', value: 'SG.Test.Outer+Inner' },
        { type: 'int32[]', value: [1, 2, 3] },
      ],
      namedArguments: [{ kind: 'field', name: 'Boxed', type: 'object', value: '42' }],
    });
  });

  test('RuntimeCompatibility(WrapNonExceptionThrows = true) via MemberRef', () => {
    const rc = md.assemblyAttributes.find((a) => a.typeName === 'System.Runtime.CompilerServices.RuntimeCompatibilityAttribute')!;
    expect(md.decodeAttribute(rc).namedArguments).toEqual([{ kind: 'property', name: 'WrapNonExceptionThrows', type: 'bool', value: true }]);
  });
});

describe('other assembly shapes', () => {
  test('a netmodule has no manifest', () => {
    const md = load('assemblies/part.netmodule');
    expect(md.hasManifest).toBe(false);
    expect(md.assembly).toBeUndefined();
    expect(md.assemblyAttributes).toEqual([]);
  });

  test('al links a netmodule through the File table and exports its types', () => {
    const md = load('assemblies/al-delay.dll');
    expect(md.files.map((f) => f.name)).toEqual(['part.netmodule']);
    expect(md.files[0]!.flags).toBe(0);
    expect(md.files[0]!.hashValue.length).toBe(20);
    expect(md.exportedTypes.map((e) => e.fullName)).toContain('SG.Part.Piece');
  });

  test('a satellite assembly has a culture and an embedded resource', () => {
    const md = load('addin/de/SampleAddin.resources.dll');
    expect(md.assembly!.culture).toBe('de');
    expect(md.assembly!.name).toBe('SampleAddin.resources');
    expect(md.manifestResources.map((r) => r.name)).toContain('SampleAddin.Strings.de.txt');
    expect(md.manifestResources[0]!.implementation).toBeNull();
  });

  test('the vendor attribute on the sample add-in comes from Contoso.AddinApi with one bool argument true', () => {
    const md = load('addin/SampleAddin.dll');
    const attr = md.assemblyAttributes.find((a) => a.typeName === 'Contoso.ContosoSignedAssemblyAttribute')!;
    expect(attr.origin).toMatchObject({ kind: 'assembly', name: 'Contoso.AddinApi' });
    expect(Buffer.from(md.attributeConstructor(attr).signature.bytes).toString('hex')).toBe('20010102');
    expect(md.decodeAttribute(attr).fixedArguments).toEqual([{ type: 'bool', value: true }]);
  });
});
