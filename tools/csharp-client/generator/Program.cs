// Generates one C# file holding a typed client for the signing service (class SigningServiceClient, namespace
// Signgate.Client) from an OpenAPI document, with NSwag: method names come from the document's operationIds
// (listLicenses -> ListLicensesAsync), JSON through System.Text.Json. The file is written to a temporary name and
// renamed. Usage: client-generator <openapi.json> <output.cs>
using NJsonSchema;
using NJsonSchema.CodeGeneration;
using NJsonSchema.CodeGeneration.CSharp;
using NSwag;
using NSwag.CodeGeneration.CSharp;
using NSwag.CodeGeneration.OperationNameGenerators;

if (args.Length != 2)
{
    Console.Error.WriteLine("usage: client-generator <openapi.json> <output.cs>");
    return 2;
}
if (!File.Exists(args[0]))
{
    Console.Error.WriteLine($"client-generator: {args[0]} does not exist; pass the path of schemas/openapi.json.");
    return 2;
}

var document = await OpenApiDocument.FromFileAsync(args[0]);
var settings = new CSharpClientGeneratorSettings
{
    ClassName = "SigningServiceClient",
    GenerateClientInterfaces = true,
    UseBaseUrl = true,
    GenerateBaseUrlProperty = true,
    OperationNameGenerator = new SingleClientFromOperationIdOperationNameGenerator(),
    CSharpGeneratorSettings =
    {
        Namespace = "Signgate.Client",
        JsonLibrary = CSharpJsonLibrary.SystemTextJson,
        GenerateNullableReferenceTypes = true,
        TypeNameGenerator = new TitleFirstTypeNameGenerator(),
    },
};
var code = new CSharpClientGenerator(document, settings).GenerateFile();

var output = Path.GetFullPath(args[1]);
Directory.CreateDirectory(Path.GetDirectoryName(output)!);
var temporary = output + ".tmp";
await File.WriteAllTextAsync(temporary, code);
File.Move(temporary, output, overwrite: true);
Console.WriteLine($"wrote {output} ({document.Operations.Count()} operations)");
return 0;

/// <summary>
/// Names a generated type after its schema's title where the document gives one (JobStatus, AssemblyStatus,
/// JobMessage, FileProcessingState, ...); NJsonSchema would otherwise name nested types after the property that
/// holds them (Assemblies, Messages).
/// </summary>
sealed class TitleFirstTypeNameGenerator : DefaultTypeNameGenerator
{
    public override string Generate(JsonSchema schema, string? typeNameHint, IEnumerable<string> reservedTypeNames) =>
        base.Generate(schema, string.IsNullOrEmpty(schema.Title) ? typeNameHint : schema.Title, reservedTypeNames);
}
