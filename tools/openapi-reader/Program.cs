// Reads an OpenAPI document with Microsoft.OpenApi and prints, as one JSON object, the version it read, the reader's
// errors and warnings, the default validation rules' findings, and the operations it found (method, path, id).
// Exit code 0 when it could read the file at all; the caller judges the lists. Usage: openapi-reader <file>
using System.Text.Json;
using Microsoft.OpenApi;
using Microsoft.OpenApi.Reader;

if (args.Length != 1)
{
    Console.Error.WriteLine("usage: openapi-reader <openapi.json>");
    return 2;
}

ReadResult result;
await using (var stream = File.OpenRead(args[0]))
{
    result = await OpenApiDocument.LoadAsync(stream, OpenApiConstants.Json, new OpenApiReaderSettings());
}

var document = result.Document;
var diagnostic = result.Diagnostic;
string Show(OpenApiError e) => $"{e.Pointer}: {e.Message}";

var validation = document is null
    ? new List<string>()
    : document.Validate(ValidationRuleSet.GetDefaultRuleSet()).Select(Show).ToList();

var operations = new List<object>();
foreach (var (path, item) in document?.Paths ?? new OpenApiPaths())
{
    foreach (var (method, operation) in item.Operations ?? new Dictionary<HttpMethod, OpenApiOperation>())
    {
        operations.Add(new { method = method.Method, path, operationId = operation.OperationId });
    }
}

var report = new
{
    specificationVersion = diagnostic?.SpecificationVersion.ToString(),
    errors = diagnostic?.Errors.Select(Show).ToList() ?? new List<string>(),
    warnings = diagnostic?.Warnings.Select(Show).ToList() ?? new List<string>(),
    validation,
    title = document?.Info?.Title,
    license = document?.Info?.License?.Name,
    operations,
};
Console.WriteLine(JsonSerializer.Serialize(report));
return document is null ? 1 : 0;
