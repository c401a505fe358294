// The oracle of test/corpus/nuget-corpus.test.ts: for each path (arguments, else one per line on stdin), one JSON
// line with what System.Reflection.Metadata reads from the file: identity, the strong-name signature slot and the
// CorFlags StrongNameSigned bit, assembly references and the full type names of assembly-level custom attributes.
// It never stops on a bad file: the line carries "error" instead.
using System.Reflection;
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;
using System.Reflection.PortableExecutable;
using System.Text.Json;

if (args.Length > 0 && args[0] == "--compare") return JsonLines.Run(args[1..], Compare.Describe);
if (args.Length > 0 && args[0] == "--tables") return JsonLines.Run(args[1..], Tables.Describe);
return JsonLines.Run(args, Describe);

static void Describe(Utf8JsonWriter json, string path)
{
    json.WriteStartObject();
    json.WriteString("path", path);
    try
    {
        using var stream = File.OpenRead(path);
        using var pe = new PEReader(stream, PEStreamOptions.PrefetchEntireImage);
        var cor = pe.PEHeaders.CorHeader;
        json.WriteBoolean("managed", cor != null);
        if (cor == null || !pe.HasMetadata)
        {
            json.WriteNull("error");
            json.WriteEndObject();
            return;
        }
        var md = pe.GetMetadataReader();
        // Everything that can throw is read before the first field is written, so that a bad file gives one error line.
        var identity = md.IsAssembly ? md.GetAssemblyDefinition() : (AssemblyDefinition?)null;
        var references = md.AssemblyReferences.Select(md.GetAssemblyReference).ToList();
        var attributes = md.IsAssembly ? identity!.Value.GetCustomAttributes().Select(h => AttributeTypeName(md, md.GetCustomAttribute(h))).ToList() : new List<string>();
        var slot = cor.StrongNameSignatureDirectory;
        var slotAllZero = slot.Size > 0 ? AllZero(pe, slot) : (bool?)null;
        var state = StrongName.State(pe, md, File.ReadAllBytes(path), a => AttributeTypeName(md, a));
        json.WriteNull("error");
        json.WriteString("strongNameState", state);
        json.WriteNumber("corFlags", (int)cor.Flags);
        json.WriteBoolean("strongNameSignedFlag", (cor.Flags & CorFlags.StrongNameSigned) != 0);
        if (slotAllZero is { } allZero)
        {
            json.WriteStartObject("signatureSlot");
            json.WriteNumber("rva", slot.RelativeVirtualAddress);
            json.WriteNumber("size", slot.Size);
            json.WriteBoolean("allZero", allZero);
            json.WriteEndObject();
        }
        else json.WriteNull("signatureSlot");
        if (identity is { } def)
        {
            json.WriteStartObject("identity");
            WriteName(json, md, def.Name, def.Version, def.Culture, "publicKey", def.PublicKey, def.Flags);
            json.WriteNumber("hashAlgorithm", (int)def.HashAlgorithm);
            json.WriteEndObject();
        }
        else json.WriteNull("identity");
        json.WriteStartArray("references");
        foreach (var r in references)
        {
            json.WriteStartObject();
            WriteName(json, md, r.Name, r.Version, r.Culture, "publicKeyOrToken", r.PublicKeyOrToken, r.Flags);
            json.WriteEndObject();
        }
        json.WriteEndArray();
        json.WriteStartArray("attributes");
        foreach (var a in attributes) json.WriteStringValue(a);
        json.WriteEndArray();
    }
    catch (Exception e)
    {
        json.WriteString("error", $"{e.GetType().Name}: {e.Message}");
    }
    json.WriteEndObject();
}

// The fields an assembly name has, on the Assembly row and on an AssemblyRef row alike.
static void WriteName(Utf8JsonWriter json, MetadataReader md, StringHandle name, Version version, StringHandle culture, string keyField, BlobHandle key, AssemblyFlags flags)
{
    json.WriteString("name", md.GetString(name));
    json.WriteString("version", version.ToString(4));
    json.WriteString("culture", md.GetString(culture));
    var bytes = md.GetBlobBytes(key);
    if (bytes.Length > 0) json.WriteString(keyField, Convert.ToHexStringLower(bytes));
    else json.WriteNull(keyField);
    json.WriteNumber("flags", (int)flags);
}

static bool AllZero(PEReader pe, DirectoryEntry slot)
{
    var bytes = pe.GetSectionData(slot.RelativeVirtualAddress).GetContent(0, slot.Size);
    foreach (var b in bytes) if (b != 0) return false;
    return true;
}

// Namespace.Outer/Inner of the attribute's type; a generic attribute names its generic definition.
static string AttributeTypeName(MetadataReader md, CustomAttribute attribute)
{
    var ctor = attribute.Constructor;
    EntityHandle type = ctor.Kind switch
    {
        HandleKind.MethodDefinition => md.GetMethodDefinition((MethodDefinitionHandle)ctor).GetDeclaringType(),
        HandleKind.MemberReference => md.GetMemberReference((MemberReferenceHandle)ctor).Parent,
        _ => throw new BadImageFormatException($"attribute constructor of kind {ctor.Kind}"),
    };
    return TypeName(md, type);
}

static string TypeName(MetadataReader md, EntityHandle handle)
{
    switch (handle.Kind)
    {
        case HandleKind.TypeDefinition:
        {
            var def = md.GetTypeDefinition((TypeDefinitionHandle)handle);
            var name = md.GetString(def.Name);
            var outer = def.GetDeclaringType();
            if (!outer.IsNil) return $"{TypeName(md, outer)}/{name}";
            var ns = md.GetString(def.Namespace);
            return ns.Length > 0 ? $"{ns}.{name}" : name;
        }
        case HandleKind.TypeReference:
        {
            var r = md.GetTypeReference((TypeReferenceHandle)handle);
            var name = md.GetString(r.Name);
            if (r.ResolutionScope.Kind == HandleKind.TypeReference && !r.ResolutionScope.IsNil) return $"{TypeName(md, r.ResolutionScope)}/{name}";
            var ns = md.GetString(r.Namespace);
            return ns.Length > 0 ? $"{ns}.{name}" : name;
        }
        case HandleKind.TypeSpecification:
        {
            // GENERICINST (CLASS|VALUETYPE) TypeDefOrRef ...: the generic definition's name.
            var blob = md.GetBlobReader(md.GetTypeSpecification((TypeSpecificationHandle)handle).Signature);
            var code = blob.ReadSignatureTypeCode();
            if (code == SignatureTypeCode.GenericTypeInstance) blob.ReadSignatureTypeCode();
            return TypeName(md, blob.ReadTypeHandle());
        }
        default:
            throw new BadImageFormatException($"attribute type of kind {handle.Kind}");
    }
}
