// `srm-oracle --compare`: for each line "original<TAB>rewritten" on stdin, one JSON line that says, as System.Reflection.Metadata
// reads the two files, what differs between them. `signgate fix` may change only the Assembly row's public key and flag,
// AssemblyRef tokens, InternalsVisibleTo values, the CLI header's metadata and signature directories and flags, and it
// may only add to the #Blob heap. Everything else (tables, the other heaps, IL method bodies, managed resources, Win32
// resources, the debug directory) must read the same; each difference found is listed under "differences".
// What follows the metadata in its section may move as a whole (fix writes the metadata where it was and moves the
// rest behind it): managed resources, debug data and field data are then compared by content at their new addresses,
// FieldRVA rows may point elsewhere, and the section's VirtualSize may change; each such move is listed under "changes".
using System.Collections.Immutable;
using System.Reflection;
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;
using System.Reflection.PortableExecutable;
using System.Security.Cryptography;
using System.Text.Json;

static class Compare
{
    const string InternalsVisibleTo = "System.Runtime.CompilerServices.InternalsVisibleToAttribute";

    public static void Describe(Utf8JsonWriter json, string line)
    {
        var parts = line.Split('\t');
        json.WriteStartObject();
        json.WriteString("original", parts[0]);
        json.WriteString("rewritten", parts.Length > 1 ? parts[1] : null);
        try
        {
            if (parts.Length != 2) throw new ArgumentException("expected two paths separated by a tab");
            using var a = new PEReader(File.OpenRead(parts[0]), PEStreamOptions.PrefetchEntireImage);
            using var b = new PEReader(File.OpenRead(parts[1]), PEStreamOptions.PrefetchEntireImage);
            var differences = new List<string>();
            var changes = new List<string>();
            bool relaid = Diff(a, b, differences, changes);
            var mb = b.GetMetadataReader();
            json.WriteNull("error");
            json.WriteBoolean("relaid", relaid);
            var identity = mb.GetAssemblyDefinition();
            json.WriteString("identity", FullName(mb, identity.Name, identity.Version, identity.Culture, identity.PublicKey, AssemblyFlags.PublicKey));
            json.WriteStartArray("references");
            foreach (var h in mb.AssemblyReferences)
            {
                var r = mb.GetAssemblyReference(h);
                json.WriteStringValue(FullName(mb, r.Name, r.Version, r.Culture, r.PublicKeyOrToken, r.Flags));
            }
            json.WriteEndArray();
            json.WriteStartArray("changes");
            foreach (var c in changes) json.WriteStringValue(c);
            json.WriteEndArray();
            json.WriteStartArray("differences");
            foreach (var d in differences.Take(50)) json.WriteStringValue(d);
            json.WriteEndArray();
        }
        catch (Exception e)
        {
            json.WriteString("error", $"{e.GetType().Name}: {e.Message}");
        }
        json.WriteEndObject();
    }

    // Returns whether the table rows were laid out anew (a wider #Blob index), in which case rows are compared by content.
    static bool Diff(PEReader a, PEReader b, List<string> differences, List<string> changes)
    {
        var ma = a.GetMetadataReader();
        var mb = b.GetMetadataReader();
        void Differ(string what) => differences.Add(what);

        // Heaps: #Strings, #US and #GUID byte for byte; #Blob may only grow at its end.
        foreach (var heap in new[] { HeapIndex.String, HeapIndex.UserString, HeapIndex.Guid })
            if (!HeapBytes(ma, heap).SequenceEqual(HeapBytes(mb, heap))) Differ($"heap {heap} differs");
        var blobA = HeapBytes(ma, HeapIndex.Blob);
        var blobB = HeapBytes(mb, HeapIndex.Blob);
        if (blobB.Length < blobA.Length || !blobB.AsSpan(0, blobA.Length).SequenceEqual(blobA)) Differ("heap Blob does not start with the original heap");
        else if (blobB.Length > blobA.Length) changes.Add($"#Blob grew by {blobB.Length - blobA.Length} bytes");

        // Tables: the same row counts; rows byte for byte where the layout is unchanged, except the rows fix may change.
        bool relaid = false;
        var mayChange = new HashSet<TableIndex> { TableIndex.Assembly, TableIndex.AssemblyRef, TableIndex.CustomAttribute, TableIndex.FieldRva };
        for (int t = 0; t <= (int)TableIndex.GenericParamConstraint; t++)
        {
            var table = (TableIndex)t;
            int rows = ma.GetTableRowCount(table);
            if (rows != mb.GetTableRowCount(table)) { Differ($"{table}: {rows} rows became {mb.GetTableRowCount(table)}"); continue; }
            if (rows == 0) continue;
            if (ma.GetTableRowSize(table) != mb.GetTableRowSize(table)) { relaid = true; continue; }
            if (mayChange.Contains(table)) continue;
            if (!TableBytes(ma, table).SequenceEqual(TableBytes(mb, table))) Differ($"{table}: rows differ");
        }

        // Content checks that hold whatever the layout: definitions, references and signatures by value.
        CompareSequence(differences, "TypeDef", ma.TypeDefinitions.Select(h => TypeDefText(ma, h)), mb.TypeDefinitions.Select(h => TypeDefText(mb, h)));
        CompareSequence(differences, "TypeRef", ma.TypeReferences.Select(h => TypeRefText(ma, h)), mb.TypeReferences.Select(h => TypeRefText(mb, h)));
        CompareSequence(differences, "MethodDef", ma.MethodDefinitions.Select(h => MethodText(ma, h)), mb.MethodDefinitions.Select(h => MethodText(mb, h)));
        CompareSequence(differences, "Field", ma.FieldDefinitions.Select(h => FieldText(ma, h)), mb.FieldDefinitions.Select(h => FieldText(mb, h)));
        CompareSequence(differences, "MemberRef", ma.MemberReferences.Select(h => MemberRefText(ma, h)), mb.MemberReferences.Select(h => MemberRefText(mb, h)));
        CompareSequence(differences, "TypeSpec", Enumerable.Range(1, ma.GetTableRowCount(TableIndex.TypeSpec)).Select(i => Hex(ma.GetBlobBytes(ma.GetTypeSpecification(MetadataTokens.TypeSpecificationHandle(i)).Signature))),
            Enumerable.Range(1, mb.GetTableRowCount(TableIndex.TypeSpec)).Select(i => Hex(mb.GetBlobBytes(mb.GetTypeSpecification(MetadataTokens.TypeSpecificationHandle(i)).Signature))));
        CompareSequence(differences, "StandAloneSig", Enumerable.Range(1, ma.GetTableRowCount(TableIndex.StandAloneSig)).Select(i => Hex(ma.GetBlobBytes(ma.GetStandaloneSignature(MetadataTokens.StandaloneSignatureHandle(i)).Signature))),
            Enumerable.Range(1, mb.GetTableRowCount(TableIndex.StandAloneSig)).Select(i => Hex(mb.GetBlobBytes(mb.GetStandaloneSignature(MetadataTokens.StandaloneSignatureHandle(i)).Signature))));

        // The rows fix may change: the identity but its key, references but their key or token, attributes but InternalsVisibleTo values.
        var da = ma.GetAssemblyDefinition();
        var db = mb.GetAssemblyDefinition();
        if (ma.GetString(da.Name) != mb.GetString(db.Name) || da.Version != db.Version || ma.GetString(da.Culture) != mb.GetString(db.Culture) || da.HashAlgorithm != db.HashAlgorithm
            || (da.Flags & ~AssemblyFlags.PublicKey) != (db.Flags & ~AssemblyFlags.PublicKey))
            Differ("Assembly row: name, version, culture, hash algorithm or flags differ");
        if (!ma.GetBlobBytes(da.PublicKey).SequenceEqual(mb.GetBlobBytes(db.PublicKey))) changes.Add("Assembly public key");
        var ra = ma.AssemblyReferences.Select(ma.GetAssemblyReference).ToList();
        var rb = mb.AssemblyReferences.Select(mb.GetAssemblyReference).ToList();
        for (int i = 0; i < ra.Count; i++)
        {
            var x = ra[i];
            var y = rb[i];
            var name = ma.GetString(x.Name);
            if (name != mb.GetString(y.Name) || x.Version != y.Version || ma.GetString(x.Culture) != mb.GetString(y.Culture) || !ma.GetBlobBytes(x.HashValue).SequenceEqual(mb.GetBlobBytes(y.HashValue))
                || (x.Flags & ~AssemblyFlags.PublicKey) != (y.Flags & ~AssemblyFlags.PublicKey))
                Differ($"AssemblyRef {i + 1} ({name}): more than its key or token differs");
            else if (Token(ma, x.PublicKeyOrToken, x.Flags) != Token(mb, y.PublicKeyOrToken, y.Flags)) changes.Add($"reference {name} token {Token(mb, y.PublicKeyOrToken, y.Flags)}");
        }
        var ca = ma.CustomAttributes.Select(h => ma.GetCustomAttribute(h)).ToList();
        var cb = mb.CustomAttributes.Select(h => mb.GetCustomAttribute(h)).ToList();
        for (int i = 0; i < ca.Count; i++)
        {
            if (ca[i].Parent != cb[i].Parent || ca[i].Constructor != cb[i].Constructor) { Differ($"CustomAttribute {i + 1}: parent or constructor differs"); continue; }
            var va = ma.GetBlobBytes(ca[i].Value);
            var vb = mb.GetBlobBytes(cb[i].Value);
            if (va.SequenceEqual(vb)) continue;
            if (AttributeType(ma, ca[i]) == InternalsVisibleTo) changes.Add($"InternalsVisibleTo {FirstString(vb)}");
            else Differ($"CustomAttribute {i + 1}: value differs");
        }

        // Bytes outside the metadata: IL bodies, managed resources, Win32 resources, debug directory entries and their data.
        foreach (var h in ma.MethodDefinitions)
        {
            var m = ma.GetMethodDefinition(h);
            if (m.RelativeVirtualAddress == 0) continue;
            var n = mb.GetMethodDefinition(h);
            if (n.RelativeVirtualAddress != m.RelativeVirtualAddress) { Differ($"method {MetadataTokens.GetToken(h):x8}: RVA moved"); continue; }
            var bodyA = a.GetMethodBody(m.RelativeVirtualAddress);
            var bodyB = b.GetMethodBody(n.RelativeVirtualAddress);
            if (!bodyA.GetILBytes()!.SequenceEqual(bodyB.GetILBytes()!) || bodyA.MaxStack != bodyB.MaxStack || bodyA.LocalSignature != bodyB.LocalSignature || bodyA.ExceptionRegions.Length != bodyB.ExceptionRegions.Length)
                Differ($"method {MetadataTokens.GetToken(h):x8}: body differs");
        }
        var resA = a.PEHeaders.CorHeader!.ResourcesDirectory;
        var resB = b.PEHeaders.CorHeader!.ResourcesDirectory;
        if (resA.Size != resB.Size) Differ("CLI header: resources directory differs");
        else if (resA.RelativeVirtualAddress != resB.RelativeVirtualAddress && resA.Size > 0 && Section(a, resA).SequenceEqual(Section(b, resB))) changes.Add("managed resources moved");
        else if (resA.Size > 0 && !Section(a, resA).SequenceEqual(Section(b, resB))) Differ("managed resources differ");
        var w32A = a.PEHeaders.PEHeader!.ResourceTableDirectory;
        var w32B = b.PEHeaders.PEHeader!.ResourceTableDirectory;
        if (w32A.RelativeVirtualAddress != w32B.RelativeVirtualAddress || w32A.Size != w32B.Size) Differ("Win32 resource directory differs");
        else if (w32A.Size > 0 && !Section(a, w32A).SequenceEqual(Section(b, w32B))) Differ("Win32 resources differ");
        var debugA = a.ReadDebugDirectory();
        var debugB = b.ReadDebugDirectory();
        if (debugA.Length != debugB.Length) Differ("debug directory: entry count differs");
        else for (int i = 0; i < debugA.Length; i++)
        {
            var x = debugA[i];
            var y = debugB[i];
            if (x.Type != y.Type || x.Stamp != y.Stamp || x.MajorVersion != y.MajorVersion || x.MinorVersion != y.MinorVersion || x.DataSize != y.DataSize || (x.DataRelativeVirtualAddress == 0) != (y.DataRelativeVirtualAddress == 0))
                Differ($"debug directory entry {i} ({x.Type}) differs");
            else if (x.DataRelativeVirtualAddress != 0 && x.DataSize > 0
                && !a.GetSectionData(x.DataRelativeVirtualAddress).GetContent(0, x.DataSize).SequenceEqual(b.GetSectionData(y.DataRelativeVirtualAddress).GetContent(0, y.DataSize)))
                Differ($"debug directory entry {i} ({x.Type}): data differs");
            // The data as a debugger finds it in the file, by PointerToRawData (moved when the headers grew).
            else if (x.DataPointer != 0 && !a.GetEntireImage().GetContent(x.DataPointer, x.DataSize).SequenceEqual(b.GetEntireImage().GetContent(y.DataPointer, y.DataSize)))
                Differ($"debug directory entry {i} ({x.Type}): the data at PointerToRawData differs");
            else
            {
                if (x.DataRelativeVirtualAddress != y.DataRelativeVirtualAddress) changes.Add($"debug data {i} ({x.Type}) moved");
                if (x.Type == DebugDirectoryEntryType.CodeView)
                {
                    var cx = a.ReadCodeViewDebugDirectoryData(x);
                    var cy = b.ReadCodeViewDebugDirectoryData(y);
                    if (cx.Guid != cy.Guid || cx.Age != cy.Age || cx.Path != cy.Path) Differ($"debug directory entry {i}: CodeView PDB id or path differs");
                }
            }
        }
        var corA = a.PEHeaders.CorHeader!;
        var corB = b.PEHeaders.CorHeader!;
        if (corA.EntryPointTokenOrRelativeVirtualAddress != corB.EntryPointTokenOrRelativeVirtualAddress || (corA.Flags & ~CorFlags.StrongNameSigned) != (corB.Flags & ~CorFlags.StrongNameSigned)
            || corA.MajorRuntimeVersion != corB.MajorRuntimeVersion || corA.MinorRuntimeVersion != corB.MinorRuntimeVersion || corA.VtableFixupsDirectory.Size != corB.VtableFixupsDirectory.Size)
            Differ("CLI header: entry point, flags, runtime version or fixups differ");
        // Field data (static array initializers) by content at each FieldRVA row's address, for the size of the field's type.
        foreach (var h in ma.FieldDefinitions)
        {
            int rvaA = ma.GetFieldDefinition(h).GetRelativeVirtualAddress();
            int rvaB = mb.GetFieldDefinition(h).GetRelativeVirtualAddress();
            if ((rvaA == 0) != (rvaB == 0)) { Differ($"field {MetadataTokens.GetToken(h):x8}: RVA added or removed"); continue; }
            if (rvaA == 0) continue;
            int size = FieldDataSize(ma, ma.GetFieldDefinition(h));
            if (size <= 0) { Differ($"field {MetadataTokens.GetToken(h):x8}: size of its data unknown"); continue; }
            if (!a.GetSectionData(rvaA).GetContent(0, size).SequenceEqual(b.GetSectionData(rvaB).GetContent(0, size))) Differ($"field {MetadataTokens.GetToken(h):x8}: data differs");
            else if (rvaA != rvaB) changes.Add($"field data {MetadataTokens.GetToken(h):x8} moved");
        }
        // Sections keep their address and characteristics; the one holding the metadata may change its VirtualSize.
        int metadataRva = corA.MetadataDirectory.RelativeVirtualAddress;
        foreach (var s in a.PEHeaders.SectionHeaders)
        {
            var t = b.PEHeaders.SectionHeaders.FirstOrDefault(x => x.Name == s.Name);
            bool holdsMetadata = metadataRva >= s.VirtualAddress && metadataRva < s.VirtualAddress + s.VirtualSize;
            if (t.Name != s.Name || t.VirtualAddress != s.VirtualAddress || t.SectionCharacteristics != s.SectionCharacteristics || (t.VirtualSize != s.VirtualSize && !holdsMetadata))
                Differ($"section {s.Name}: address, size or characteristics differ");
            else if (t.VirtualSize != s.VirtualSize) changes.Add($"section {s.Name} VirtualSize {s.VirtualSize:x} -> {t.VirtualSize:x}");
        }
        return relaid;
    }

    static void CompareSequence(List<string> differences, string what, IEnumerable<string> a, IEnumerable<string> b)
    {
        var x = a.ToList();
        var y = b.ToList();
        if (x.Count != y.Count) { differences.Add($"{what}: {x.Count} rows became {y.Count}"); return; }
        for (int i = 0; i < x.Count; i++)
            if (x[i] != y[i]) { differences.Add($"{what} {i + 1}: {x[i]} became {y[i]}"); return; }
    }

    static string TypeDefText(MetadataReader md, TypeDefinitionHandle h)
    {
        var t = md.GetTypeDefinition(h);
        return $"{md.GetString(t.Namespace)}.{md.GetString(t.Name)} {t.Attributes} {Token(t.BaseType)} {t.GetFields().Count} {t.GetMethods().Count}";
    }

    static string TypeRefText(MetadataReader md, TypeReferenceHandle h)
    {
        var t = md.GetTypeReference(h);
        return $"{Token(t.ResolutionScope)} {md.GetString(t.Namespace)}.{md.GetString(t.Name)}";
    }

    static string MethodText(MetadataReader md, MethodDefinitionHandle h)
    {
        var m = md.GetMethodDefinition(h);
        return $"{md.GetString(m.Name)} {m.Attributes} {m.ImplAttributes} {m.RelativeVirtualAddress} {Hex(md.GetBlobBytes(m.Signature))}";
    }

    static string FieldText(MetadataReader md, FieldDefinitionHandle h)
    {
        var f = md.GetFieldDefinition(h);
        return $"{md.GetString(f.Name)} {f.Attributes} {Hex(md.GetBlobBytes(f.Signature))}";
    }

    static string MemberRefText(MetadataReader md, MemberReferenceHandle h)
    {
        var m = md.GetMemberReference(h);
        return $"{Token(m.Parent)} {md.GetString(m.Name)} {Hex(md.GetBlobBytes(m.Signature))}";
    }

    // "Name, Version=…, Culture=…, PublicKeyToken=…" built from the row (AssemblyName would refuse cultures that a
    // globalization-invariant runtime does not know).
    static string FullName(MetadataReader md, StringHandle name, Version version, StringHandle culture, BlobHandle key, AssemblyFlags flags)
    {
        var c = md.GetString(culture);
        return $"{md.GetString(name)}, Version={version}, Culture={(c.Length == 0 ? "neutral" : c)}, PublicKeyToken={Token(md, key, flags)}";
    }

    // The public key token of a key (flag PublicKey) or the token itself; "null" for none.
    static string Token(MetadataReader md, BlobHandle keyOrToken, AssemblyFlags flags)
    {
        var bytes = md.GetBlobBytes(keyOrToken);
        if (bytes.Length == 0) return "null";
        if ((flags & AssemblyFlags.PublicKey) == 0) return Hex(bytes);
        var hash = SHA1.HashData(bytes);
        var token = hash.AsSpan(hash.Length - 8).ToArray();
        Array.Reverse(token);
        return Hex(token);
    }

    static string Token(EntityHandle h) => h.IsNil ? "nil" : MetadataTokens.GetToken(h).ToString("x8");

    static string AttributeType(MetadataReader md, CustomAttribute attribute)
    {
        var ctor = attribute.Constructor;
        if (ctor.Kind != HandleKind.MemberReference) return "";
        var parent = md.GetMemberReference((MemberReferenceHandle)ctor).Parent;
        if (parent.Kind != HandleKind.TypeReference) return "";
        var t = md.GetTypeReference((TypeReferenceHandle)parent);
        return $"{md.GetString(t.Namespace)}.{md.GetString(t.Name)}";
    }

    // The first fixed argument of an attribute value blob, when it is a string.
    static unsafe string? FirstString(byte[] value)
    {
        fixed (byte* p = value)
        {
            var reader = new BlobReader(p, value.Length);
            if (reader.ReadUInt16() != 1) return null;
            return reader.ReadSerializedString();
        }
    }

    static unsafe byte[] HeapBytes(MetadataReader md, HeapIndex heap)
    {
        int size = md.GetHeapSize(heap);
        if (size == 0) return [];
        return new ReadOnlySpan<byte>(md.MetadataPointer + md.GetHeapMetadataOffset(heap), size).ToArray();
    }

    static unsafe byte[] TableBytes(MetadataReader md, TableIndex table)
    {
        int size = md.GetTableRowCount(table) * md.GetTableRowSize(table);
        return new ReadOnlySpan<byte>(md.MetadataPointer + md.GetTableMetadataOffset(table), size).ToArray();
    }

    // The size of a field's mapped data: a primitive's, or a value type's ClassLayout size; 0 when not known here.
    static int FieldDataSize(MetadataReader md, FieldDefinition field)
    {
        var sig = md.GetBlobReader(field.Signature);
        if (sig.ReadByte() != 0x06) return 0;
        var code = sig.ReadCompressedInteger();
        while (code == 0x1f || code == 0x20) { sig.ReadCompressedInteger(); code = sig.ReadCompressedInteger(); } // custom modifiers
        switch (code)
        {
            case 0x02: case 0x04: case 0x05: return 1;
            case 0x03: case 0x06: case 0x07: return 2;
            case 0x08: case 0x09: case 0x0c: return 4;
            case 0x0a: case 0x0b: case 0x0d: return 8;
            case 0x18: case 0x19: return 4;
            case 0x11:
                var handle = sig.ReadTypeHandle();
                if (handle.Kind != HandleKind.TypeDefinition) return 0;
                return md.GetTypeDefinition((TypeDefinitionHandle)handle).GetLayout().Size;
            default: return 0;
        }
    }

    static byte[] Section(PEReader pe, DirectoryEntry entry) => pe.GetSectionData(entry.RelativeVirtualAddress).GetContent(0, entry.Size).ToArray();

    static string Hex(byte[] bytes) => Convert.ToHexStringLower(bytes);
    static string Hex(ImmutableArray<byte> bytes) => Convert.ToHexStringLower(bytes.AsSpan());
}
