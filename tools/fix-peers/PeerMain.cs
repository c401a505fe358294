// What both peers of `signgate fix` share (tools/fix-peers/cecil and tools/fix-peers/dnlib):
//   fix-peer-<library> <key.snk> <output folder> <file>...   (no files: one path per line on standard input)
// Each input is read with the library; an assembly without a public key is strong-named with the key pair, the
// references of every assembly of the set to those assemblies get their public key token and InternalsVisibleTo
// naming them gets the public key, and the result is written below the output folder at its path relative to the
// inputs' common folder (as signgate fix --out does). An assembly that needs no change (it has a public key and names
// none of them) is copied. A file the library cannot read (native, damaged) is reported and left out.
// One line per file on standard output; exit 1 if any failed.
using System.Security.Cryptography;

public interface IPeerModule : IDisposable
{
    /** The simple name of the assembly, or null for a module without an Assembly row. */
    string? Name { get; }
    bool HasPublicKey { get; }
    IEnumerable<string> ReferenceNames { get; }
    IEnumerable<string> FriendNames { get; }
    /** Gives it the public key (when it has none), the tokens and the friends' keys, then writes it signed. */
    void Write(string outPath, PeerKey key, ISet<string> strongNamed);
}

public sealed class PeerKey
{
    public required byte[] KeyPair { get; init; }
    /** The public key blob an assembly carries: the 12-byte signature header, then the CAPI PUBLICKEYBLOB. */
    public required byte[] PublicKey { get; init; }
    public required byte[] Token { get; init; }

    /** Reads an .snk key pair (a CAPI PRIVATEKEYBLOB, as sn -k writes it). */
    public static PeerKey Read(string path)
    {
        var pair = File.ReadAllBytes(path);
        if (pair.Length < 20 || pair[0] != 0x07 || BitConverter.ToUInt32(pair, 8) != 0x32415352) throw new InvalidDataException($"{path}: not a key pair (.snk from sn -k)");
        var bits = BitConverter.ToInt32(pair, 12);
        var blob = new byte[12 + 20 + bits / 8];
        BitConverter.GetBytes(0x00002400).CopyTo(blob, 0); // CALG_RSA_SIGN
        BitConverter.GetBytes(0x00008004).CopyTo(blob, 4); // CALG_SHA1
        BitConverter.GetBytes(20 + bits / 8).CopyTo(blob, 8);
        blob[12] = 0x06; // PUBLICKEYBLOB
        blob[13] = 0x02;
        BitConverter.GetBytes(0x00002400).CopyTo(blob, 16);
        BitConverter.GetBytes(0x31415352).CopyTo(blob, 20); // RSA1
        Array.Copy(pair, 12, blob, 24, 8 + bits / 8); // bit length, exponent, modulus
        var hash = SHA1.HashData(blob);
        var token = hash[^8..];
        Array.Reverse(token);
        return new PeerKey { KeyPair = pair, PublicKey = blob, Token = token };
    }
}

public static class PeerMain
{
    public static int Run(string[] args, Func<string, IPeerModule> load)
    {
        if (args.Length < 2)
        {
            Console.Error.WriteLine("usage: <key.snk> <output folder> <file>... (no files: one path per line on standard input)");
            return 2;
        }
        var key = PeerKey.Read(args[0]);
        var outDir = args[1];
        Directory.CreateDirectory(outDir);
        var files = args.Length > 2 ? args[2..] : ReadLines(Console.In).ToArray();
        var modules = new List<(string Path, IPeerModule Module)>();
        var failed = 0;
        foreach (var path in files)
        {
            try { modules.Add((path, load(path))); }
            catch (Exception e)
            {
                Console.WriteLine($"{path}: not read ({e.GetType().Name}: {e.Message})");
                failed++;
            }
        }
        var root = CommonFolder(modules.Select(m => Path.GetFullPath(m.Path)).ToList());
        var strongNamed = new HashSet<string>(modules.Where(m => m.Module.Name != null && !m.Module.HasPublicKey).Select(m => m.Module.Name!), StringComparer.OrdinalIgnoreCase);
        foreach (var (path, module) in modules)
        {
            using var _ = module;
            var outPath = Path.Combine(outDir, Path.GetRelativePath(root, Path.GetFullPath(path)));
            Directory.CreateDirectory(Path.GetDirectoryName(outPath)!);
            try
            {
                if (module.Name == null) Console.WriteLine($"{path}: skipped (a module without an Assembly row)");
                else if (module.HasPublicKey && !module.ReferenceNames.Concat(module.FriendNames).Any(strongNamed.Contains))
                {
                    File.Copy(path, outPath, true);
                    Console.WriteLine($"{path}: copied");
                }
                else
                {
                    var outcome = module.HasPublicKey ? "re-signed, references updated" : "strong-named";
                    module.Write(outPath, key, strongNamed);
                    Console.WriteLine($"{path}: {outcome}");
                }
            }
            catch (Exception e)
            {
                Console.WriteLine($"{path}: failed ({e.GetType().Name}: {e.Message})");
                failed++;
            }
        }
        return failed == 0 ? 0 : 1;
    }

    /** The friend an InternalsVisibleTo value names without a public key, else null. */
    public static string? FriendWithoutKey(string? value) =>
        value == null || value.Contains("PublicKey", StringComparison.OrdinalIgnoreCase) ? null : value.Split(',')[0].Trim();

    public static string Hex(byte[] bytes) => Convert.ToHexString(bytes).ToLowerInvariant();

    /** The deepest folder that holds every path, as signgate fix --out finds it. */
    private static string CommonFolder(IReadOnlyList<string> paths)
    {
        if (paths.Count == 0) return Directory.GetCurrentDirectory();
        var common = Path.GetDirectoryName(paths[0])!;
        while (!paths.All(p => p.StartsWith(common.TrimEnd('/') + "/", StringComparison.Ordinal)) && Path.GetDirectoryName(common) is { } up) common = up;
        return common;
    }

    private static IEnumerable<string> ReadLines(TextReader reader)
    {
        for (var line = reader.ReadLine(); line != null; line = reader.ReadLine()) if (line.Trim().Length > 0) yield return line.Trim();
    }
}
