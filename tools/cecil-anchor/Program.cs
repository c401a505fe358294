// The Mono.Cecil + Mono.Security anchor of `npm run bench`: for each path (arguments, else one per line on stdin)
// one JSON line with what Mono.Cecil reads (identity, public key token, assembly-level attributes with their
// decoded arguments, references) and whether Mono.Security's StrongName verifies the signature, as Mono's
// `sn -vf` does. A file that cannot be read gives a line with "error"; the scan goes on (but Mono.Cecil overflows
// its stack on the hostile fixtures with cyclic nested types, which ends the process: it is meant for real corpora).
using System.Text.Json;
using Mono.Cecil;

// One resolver for the whole scan, as a tool would keep it: decoding an enum argument of an attribute resolves its
// type's assembly, and the resolver caches what it has read.
using var resolver = new DefaultAssemblyResolver();
return JsonLines.Run(args, (json, path) => Describe(json, path, resolver));

static void Describe(Utf8JsonWriter json, string path, IAssemblyResolver resolver)
{
    json.WriteStartObject();
    json.WriteString("path", path);
    try
    {
        using var module = ModuleDefinition.ReadModule(path, new ReaderParameters { ReadingMode = ReadingMode.Deferred, AssemblyResolver = resolver });
        var assembly = module.Assembly;
        // Everything that can throw is read before the first field is written, so that a bad file gives one error line.
        var attributes = assembly?.CustomAttributes.Select(Attribute).ToList() ?? new List<string>();
        var references = module.AssemblyReferences.Select(r => r.FullName).ToList();
        bool? verified = null;
        if (assembly is { Name.HasPublicKey: true })
        {
            try { verified = new Mono.Security.StrongName(assembly.Name.PublicKey).Verify(path); }
            catch (Exception) { verified = false; } // the ECMA key, or a key Mono.Security cannot use
        }
        json.WriteNull("error");
        json.WriteString("name", assembly?.Name.FullName);
        json.WriteBoolean("strongNameSigned", (module.Attributes & ModuleAttributes.StrongNameSigned) != 0);
        if (verified is { } v) json.WriteBoolean("verified", v); else json.WriteNull("verified");
        json.WriteStartArray("attributes");
        foreach (var a in attributes) json.WriteStringValue(a);
        json.WriteEndArray();
        json.WriteStartArray("references");
        foreach (var r in references) json.WriteStringValue(r);
        json.WriteEndArray();
    }
    catch (Exception e)
    {
        json.WriteString("error", $"{e.GetType().Name}: {e.Message}");
    }
    json.WriteEndObject();
}

// The attribute type and its decoded arguments, as signgate inspect decodes them.
static string Attribute(CustomAttribute a)
{
    var args = a.HasConstructorArguments ? a.ConstructorArguments.Select(x => Value(x.Value)) : Enumerable.Empty<string>();
    var named = a.HasProperties ? a.Properties.Select(p => $"{p.Name} = {Value(p.Argument.Value)}") : Enumerable.Empty<string>();
    var fields = a.HasFields ? a.Fields.Select(f => $"{f.Name} = {Value(f.Argument.Value)}") : Enumerable.Empty<string>();
    return $"{a.AttributeType.FullName}({string.Join(", ", args.Concat(named).Concat(fields))})";
}

static string Value(object? value) => value switch
{
    null => "null",
    CustomAttributeArgument[] items => $"[{string.Join(", ", items.Select(i => Value(i.Value)))}]",
    CustomAttributeArgument item => Value(item.Value),
    TypeReference t => t.FullName,
    _ => value.ToString() ?? "",
};
