// fix-host <folder> <add-in file>: loads the add-in in its own load context, then each assembly it references from
// the same folder, and binds the way .NET Framework does for a strong-named add-in: the file's full name (version,
// culture and public key token) must be the one the reference asks for. Satellite assemblies (<culture>/<name>.dll
// beside the add-in) bind the same way: the runtime asks for one by its main assembly's version and public key token,
// and .NET Framework loads none that carries another (the resources fall back to the neutral ones, as here).
// Then it runs the add-in's entry point. Exit 0 when it ran, 1 when a reference did not bind (the reason on stderr).
//
// fix-host --plugin <add-in.dll> <type> <property> [<shared folder>]: loads a class-library add-in the way a .NET
// (Core) host loads a plug-in: its dependencies are found through the add-in's own deps.json
// (AssemblyDependencyResolver), the host's shared assemblies (the vendor's API) from <shared folder>, each bound by
// its exact full name. Then it creates <type> and prints <property>. Exit 0 when it ran, 1 when a dependency did not
// bind or was not found (the reason on stderr).
//
// fix-host --load [<file>...]: the runtime's verdict on each file (the paths as arguments, else one a line on stdin),
// each loaded by path in its own collectible load context (the runtime maps the image and checks its PE and CLI
// headers). One JSON line per file: {"path","ok":true,"fullName","mvid","resources":{name:"<sha256> <length>"}}, every
// manifest resource read to its end, or {"path","ok":false,"error":"<exception type>: <message>"}. Dependencies are
// not loaded. Exit 0 (the verdicts are the output).
using System.Reflection;
using System.Runtime.Loader;

if (args.Length > 0 && args[0] == "--plugin") return PluginHost.Run(args[1..]);
if (args.Length > 0 && args[0] == "--load") return Loader.Run(args[1..]);

var folder = Path.GetFullPath(args[0]);
var context = new AddinContext(folder);
context.Resolving += (ctx, wanted) =>
{
    var path = Path.Combine(folder, wanted.Name + ".dll");
    if (!File.Exists(path)) return null;
    var found = AssemblyName.GetAssemblyName(path);
    if (found.FullName != wanted.FullName)
        throw new FileLoadException($"{wanted.FullName} was asked for, {path} is {found.FullName}");
    return ctx.LoadFromAssemblyPath(path);
};
try
{
    var addin = context.LoadFromAssemblyPath(Path.Combine(folder, args[1]));
    foreach (var reference in addin.GetReferencedAssemblies())
        if (File.Exists(Path.Combine(folder, reference.Name + ".dll"))) Console.WriteLine("bound " + context.LoadFromAssemblyName(reference).FullName);
    var result = addin.EntryPoint!.Invoke(null, addin.EntryPoint.GetParameters().Length == 0 ? null : new object[] { Array.Empty<string>() });
    return result is int code ? code : 0;
}
catch (Exception e) when (e is FileLoadException || e.InnerException is FileLoadException)
{
    Console.Error.WriteLine((e as FileLoadException ?? e.InnerException)!.Message);
    return 1;
}

/** Loads satellites from `<folder>/<culture>/` only when their full name is the one asked for. */
sealed class AddinContext(string folder) : AssemblyLoadContext("addin")
{
    protected override Assembly? Load(AssemblyName wanted)
    {
        if (string.IsNullOrEmpty(wanted.CultureName)) return null;
        var path = Path.Combine(folder, wanted.CultureName, wanted.Name + ".dll");
        if (!File.Exists(path)) return null;
        var found = AssemblyName.GetAssemblyName(path);
        if (found.FullName != wanted.FullName)
        {
            Console.Error.WriteLine($"satellite {wanted.FullName} was asked for, {path} is {found.FullName}");
            throw new FileLoadException($"{wanted.FullName} was asked for, {path} is {found.FullName}");
        }
        Console.Error.WriteLine($"satellite bound {found.FullName}");
        return LoadFromAssemblyPath(path);
    }
}

/** The --plugin mode: one add-in, its dependencies as its deps.json places them, strict full-name binding. */
static class PluginHost
{
    public static int Run(string[] args)
    {
        var addinPath = Path.GetFullPath(args[0]);
        var shared = args.Length > 3 ? Path.GetFullPath(args[3]) : null;
        var resolver = new AssemblyDependencyResolver(addinPath);
        var context = new AssemblyLoadContext("plugin");
        context.Resolving += (ctx, wanted) =>
        {
            var path = resolver.ResolveAssemblyToPath(wanted);
            if (path is null && shared is not null && File.Exists(Path.Combine(shared, wanted.Name + ".dll"))) path = Path.Combine(shared, wanted.Name + ".dll");
            if (path is null) throw new FileNotFoundException($"{wanted.FullName} was asked for; neither {Path.GetFileName(addinPath)}'s deps.json nor the shared folder has it");
            var found = AssemblyName.GetAssemblyName(path);
            if (found.FullName != wanted.FullName) throw new FileLoadException($"{wanted.FullName} was asked for, {path} is {found.FullName}");
            Console.WriteLine($"bound {found.FullName} from {path}");
            return ctx.LoadFromAssemblyPath(path);
        };
        try
        {
            var type = context.LoadFromAssemblyPath(addinPath).GetType(args[1], throwOnError: true)!;
            var value = type.GetProperty(args[2])!.GetValue(Activator.CreateInstance(type));
            Console.WriteLine($"{args[2]} = {value}");
            return 0;
        }
        catch (Exception e) when (e is IOException || e.InnerException is IOException)
        {
            // The runtime wraps what the Resolving handler threw: print each load failure down to the cause.
            for (Exception? inner = e; inner is not null; inner = inner.InnerException)
                if (inner is IOException) Console.Error.WriteLine(inner.Message);
            return 1;
        }
    }
}

/** The --load mode: each file loaded alone, its identity, MVID and manifest resources (hashed) as JSON lines. */
static class Loader
{
    public static int Run(string[] files)
    {
        var paths = files.Length > 0 ? files : Console.In.ReadToEnd().Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        foreach (var path in paths) Console.WriteLine(Load(path));
        return 0;
    }

    static string Load(string path)
    {
        var context = new AssemblyLoadContext("load " + path, isCollectible: true);
        try
        {
            var assembly = context.LoadFromAssemblyPath(Path.GetFullPath(path));
            var resources = new Dictionary<string, string>();
            foreach (var name in assembly.GetManifestResourceNames())
            {
                using var stream = assembly.GetManifestResourceStream(name);
                if (stream is null) { resources[name] = "no stream"; continue; }
                using var sha = System.Security.Cryptography.SHA256.Create();
                var length = 0L;
                var buffer = new byte[81920];
                for (int read; (read = stream.Read(buffer, 0, buffer.Length)) > 0; length += read) sha.TransformBlock(buffer, 0, read, null, 0);
                sha.TransformFinalBlock(buffer, 0, 0);
                resources[name] = $"{Convert.ToHexString(sha.Hash!).ToLowerInvariant()} {length}";
            }
            return System.Text.Json.JsonSerializer.Serialize(new { path, ok = true, fullName = assembly.FullName, mvid = assembly.ManifestModule.ModuleVersionId.ToString(), resources });
        }
        catch (Exception e)
        {
            return System.Text.Json.JsonSerializer.Serialize(new { path, ok = false, error = $"{e.GetType().FullName}: {e.Message}" });
        }
        finally
        {
            context.Unload();
        }
    }
}
