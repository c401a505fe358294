// Drives the signing service through the NSwag-generated SigningServiceClient the way a .NET release script
// would: licenses, upload two delay-signed assemblies, poll the status until processing finished, download the
// result package, read it with System.IO.Compression, delete the job, and see that the job is gone (a 404 problem). Prints one JSON object.
// Usage: client-smoke <service origin, e.g. http://127.0.0.1:5000/> <token> <file0> <file1> <result.zip>
using System.IO.Compression;
using System.Net.Http.Headers;
using System.Security.Cryptography;
using System.Text.Json;
using Signgate.Client;

if (args.Length != 5)
{
    Console.Error.WriteLine("usage: client-smoke <service origin> <token> <file0> <file1> <result.zip>");
    return 2;
}
var (origin, token, file0, file1, resultZip) = (args[0], args[1], args[2], args[3], args[4]);

using var http = new HttpClient();
http.DefaultRequestHeaders.Authorization = new AuthenticationHeaderValue("Bearer", token);
var client = new SigningServiceClient(http) { BaseUrl = origin };

var licenses = await client.ListLicensesAsync();

JobCreated created;
await using (var s0 = File.OpenRead(file0))
await using (var s1 = File.OpenRead(file1))
{
    created = await client.UploadAssembliesAsync(
        new FileParameter(s0, Path.GetFileName(file0), "application/octet-stream"),
        new FileParameter(s1, Path.GetFileName(file1), "application/octet-stream"),
        "uploaded by the NSwag-generated client");
}

var deadline = DateTime.UtcNow.AddSeconds(60);
JobStatus status = await client.GetJobStatusAsync(created.Id);
var polls = 1;
while (!status.ProcessingFinished)
{
    if (DateTime.UtcNow > deadline) throw new TimeoutException($"job {created.Id} did not finish within 60 s");
    await Task.Delay(100);
    status = await client.GetJobStatusAsync(created.Id);
    polls++;
}

long zipBytes;
using (var download = await client.DownloadJobResultAsync(created.Id))
{
    var temporary = resultZip + ".tmp";
    await using (var output = File.Create(temporary))
    {
        await download.Stream.CopyToAsync(output);
    }
    File.Move(temporary, resultZip, overwrite: true);
    zipBytes = new FileInfo(resultZip).Length;
}

// The package as .NET's own ZIP reader sees it: every entry inflated (which checks its CRC-32) and hashed.
var zipEntries = new List<object>();
using (var archive = ZipFile.OpenRead(resultZip))
{
    foreach (var entry in archive.Entries)
    {
        await using var content = entry.Open();
        zipEntries.Add(new { name = entry.FullName, length = entry.Length, sha256 = Convert.ToHexString(await SHA256.HashDataAsync(content)).ToLowerInvariant() });
    }
}

await client.DeleteJobAsync(created.Id);

int? afterDeleteStatus = null;
string? afterDeleteTitle = null;
try
{
    await client.GetJobStatusAsync(created.Id);
}
catch (ApiException<Problem> e)
{
    afterDeleteStatus = e.StatusCode;
    afterDeleteTitle = e.Result.Title;
}

Console.WriteLine(JsonSerializer.Serialize(new
{
    licenses = licenses.Select(l => l.OptionId).ToList(),
    jobId = created.Id,
    comment = created.Comment,
    statusLink = created.Links?.Status,
    polls,
    assemblies = status.Assemblies.Select(a => new { fileName = a.FileName, state = a.FileProcessingState.ToString(), messages = a.Messages.Select(m => $"{m.MessageType}: {m.Message}").ToList() }).ToList(),
    zipBytes,
    zipEntries,
    afterDeleteStatus,
    afterDeleteTitle,
}));
return 0;
