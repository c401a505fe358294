// The dnlib peer of `signgate fix` (see ../PeerMain.cs): ModuleDefMD.Load, the public key on the assembly, tokens
// on the references, Write with ModuleWriterOptions.InitializeStrongNameSigning and the key pair (StrongNameKey).
using dnlib.DotNet;
using dnlib.DotNet.Writer;

return PeerMain.Run(args, path => new DnlibModule(path));

sealed class DnlibModule(string path) : IPeerModule
{
    private const string InternalsVisibleTo = "System.Runtime.CompilerServices.InternalsVisibleToAttribute";
    private readonly ModuleDefMD module = ModuleDefMD.Load(path);

    public string? Name => module.Assembly?.Name.String;
    public bool HasPublicKey => module.Assembly is { } a && !PublicKeyBase.IsNullOrEmpty2(a.PublicKey);
    public IEnumerable<string> ReferenceNames => module.GetAssemblyRefs().Select(r => r.Name.String);
    public IEnumerable<string> FriendNames => Friends().Select(f => f.Name);

    private IEnumerable<(CustomAttribute Attribute, string Name)> Friends() =>
        module.Assembly.CustomAttributes.Where(a => a.TypeFullName == InternalsVisibleTo && a.ConstructorArguments.Count == 1)
            .Select(a => (a, PeerMain.FriendWithoutKey((a.ConstructorArguments[0].Value as UTF8String)?.String)))
            .Where(f => f.Item2 != null).Select(f => (f.a, f.Item2!)).ToList();

    public void Write(string outPath, PeerKey key, ISet<string> strongNamed)
    {
        var signing = new StrongNameKey(key.KeyPair);
        if (!HasPublicKey)
        {
            module.Assembly.PublicKey = new PublicKey(key.PublicKey);
            module.Assembly.HasPublicKey = true;
        }
        foreach (var reference in module.GetAssemblyRefs())
            if (strongNamed.Contains(reference.Name)) reference.PublicKeyOrToken = new PublicKeyToken(key.Token);
        foreach (var (attribute, name) in Friends())
            if (strongNamed.Contains(name))
                attribute.ConstructorArguments[0] = new CAArgument(attribute.ConstructorArguments[0].Type, new UTF8String($"{name}, PublicKey={PeerMain.Hex(key.PublicKey)}"));
        var options = new ModuleWriterOptions(module);
        options.InitializeStrongNameSigning(module, signing);
        module.Write(outPath, options);
    }

    public void Dispose() => module.Dispose();
}
