// The Mono.Cecil peer of `signgate fix` (see ../PeerMain.cs): ModuleDefinition.ReadModule, the public key on the
// assembly's name, tokens on the references, Write with the key pair (WriterParameters.StrongNameKeyBlob), as
// StrongNamer and Brutal.Dev's StrongNameSigner do.
using Mono.Cecil;

return PeerMain.Run(args, path => new CecilModule(path));

sealed class CecilModule(string path) : IPeerModule
{
    private const string InternalsVisibleTo = "System.Runtime.CompilerServices.InternalsVisibleToAttribute";
    private readonly ModuleDefinition module = ModuleDefinition.ReadModule(path, new ReaderParameters { ReadingMode = ReadingMode.Deferred });

    public string? Name => module.Assembly?.Name.Name;
    public bool HasPublicKey => module.Assembly?.Name.HasPublicKey == true;
    public IEnumerable<string> ReferenceNames => module.AssemblyReferences.Select(r => r.Name);
    public IEnumerable<string> FriendNames => Friends().Select(f => f.Name);

    private IEnumerable<(CustomAttribute Attribute, string Name)> Friends() =>
        module.Assembly.CustomAttributes.Where(a => a.AttributeType.FullName == InternalsVisibleTo && a.ConstructorArguments.Count == 1)
            .Select(a => (a, PeerMain.FriendWithoutKey(a.ConstructorArguments[0].Value as string)))
            .Where(f => f.Item2 != null).Select(f => (f.a, f.Item2!)).ToList();

    public void Write(string outPath, PeerKey key, ISet<string> strongNamed)
    {
        if (!HasPublicKey) module.Assembly.Name.PublicKey = key.PublicKey;
        foreach (var reference in module.AssemblyReferences)
            if (strongNamed.Contains(reference.Name)) reference.PublicKeyToken = key.Token;
        foreach (var (attribute, name) in Friends())
            if (strongNamed.Contains(name))
                attribute.ConstructorArguments[0] = new CustomAttributeArgument(attribute.ConstructorArguments[0].Type, $"{name}, PublicKey={PeerMain.Hex(key.PublicKey)}");
        module.Write(outPath, new WriterParameters { StrongNameKeyBlob = key.KeyPair });
    }

    public void Dispose() => module.Dispose();
}
