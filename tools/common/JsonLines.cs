// Shared by the consoles in tools/: for each path (arguments, else one per line on stdin) one JSON line written by
// `describe`, through one buffered writer.
using System.Text.Json;

static class JsonLines
{
    public static int Run(string[] args, Action<Utf8JsonWriter, string> describe)
    {
        var paths = args.Length > 0 ? args : ReadLines(Console.In);
        using var stdout = Console.OpenStandardOutput();
        using var buffered = new BufferedStream(stdout, 1 << 16);
        var json = new Utf8JsonWriter(buffered, new JsonWriterOptions { Indented = false });
        var newline = new byte[] { (byte)'\n' };
        foreach (var path in paths)
        {
            describe(json, path);
            json.Flush();
            json.Reset();
            buffered.Write(newline);
        }
        buffered.Flush();
        return 0;
    }

    static IEnumerable<string> ReadLines(TextReader reader)
    {
        string? line;
        while ((line = reader.ReadLine()) != null)
            if (line.Length > 0) yield return line;
    }
}
