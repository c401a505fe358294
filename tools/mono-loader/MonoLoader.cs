// mono-loader [<file>...]: Mono's verdict on each file (the paths as arguments, else one a line on stdin), the
// counterpart of `fix-host --load` on .NET. Each file is loaded by path in its own AppDomain (Mono's image loader
// checks its PE and CLI headers): Assembly.LoadFile, or, when that throws BadImageFormatException (as it does for a
// reference assembly, which Mono refuses to execute), ReflectionOnlyLoadFrom, "how" saying which and why. One JSON line per file:
// {"path","ok":true,"how","fullName","mvid","resources":{name:"<sha256> <length>"}}, every manifest resource read to
// its end, or {"path","ok":false,"error":"<exception type>: <message>"}. Exit 0 (the verdicts are the output).
// Built by test/corpus/nuget-fix.test.ts with mcs (no project: Mono's C# compiler and mscorlib only).
using System;
using System.Collections.Generic;
using System.IO;
using System.Reflection;
using System.Security.Cryptography;
using System.Text;

public static class MonoLoader
{
    public static int Main(string[] args)
    {
        var paths = new List<string>(args);
        if (paths.Count == 0)
            foreach (var line in Console.In.ReadToEnd().Split('\n'))
                if (line.Trim().Length > 0) paths.Add(line.Trim());
        foreach (var path in paths)
        {
            var domain = AppDomain.CreateDomain("load");
            try
            {
                var worker = (Worker)domain.CreateInstanceFromAndUnwrap(typeof(Worker).Assembly.Location, typeof(Worker).FullName);
                Console.WriteLine(worker.Load(path));
            }
            finally
            {
                AppDomain.Unload(domain);
            }
        }
        return 0;
    }
}

public sealed class Worker : MarshalByRefObject
{
    public string Load(string path)
    {
        var full = Path.GetFullPath(path);
        try
        {
            string how = "LoadFile";
            Assembly assembly;
            try
            {
                assembly = Assembly.LoadFile(full);
            }
            catch (BadImageFormatException e)
            {
                // Mono refuses to execute a reference assembly, saying only "Invalid Image": the file is loaded for
                // reflection only (the same image checks), and the refusal kept beside the verdict.
                how = "ReflectionOnlyLoadFrom (LoadFile: " + e.Message + ")";
                assembly = Assembly.ReflectionOnlyLoadFrom(full);
            }
            var resources = new StringBuilder();
            foreach (var name in assembly.GetManifestResourceNames())
            {
                string value;
                using (var stream = assembly.GetManifestResourceStream(name))
                {
                    if (stream == null) value = "no stream";
                    else
                    {
                        using (var sha = SHA256.Create())
                        {
                            long length = 0;
                            var buffer = new byte[81920];
                            int read;
                            while ((read = stream.Read(buffer, 0, buffer.Length)) > 0) { sha.TransformBlock(buffer, 0, read, null, 0); length += read; }
                            sha.TransformFinalBlock(buffer, 0, 0);
                            value = BitConverter.ToString(sha.Hash).Replace("-", "").ToLowerInvariant() + " " + length;
                        }
                    }
                }
                resources.Append(resources.Length == 0 ? "" : ",").Append(Json(name)).Append(':').Append(Json(value));
            }
            return "{\"path\":" + Json(path) + ",\"ok\":true,\"how\":" + Json(how) + ",\"fullName\":" + Json(assembly.FullName) +
                ",\"mvid\":" + Json(assembly.ManifestModule.ModuleVersionId.ToString()) + ",\"resources\":{" + resources + "}}";
        }
        catch (Exception e)
        {
            return "{\"path\":" + Json(path) + ",\"ok\":false,\"error\":" + Json(e.GetType().FullName + ": " + e.Message) + "}";
        }
    }

    static string Json(string text)
    {
        var s = new StringBuilder("\"");
        foreach (var c in text)
        {
            if (c == '"' || c == '\\') s.Append('\\').Append(c);
            else if (c < ' ') s.Append("\\u").Append(((int)c).ToString("x4"));
            else s.Append(c);
        }
        return s.Append('"').ToString();
    }
}
