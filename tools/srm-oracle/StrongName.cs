// The strong-name state of an assembly, decided here independently of signgate: the bytes a signature covers
// (ECMA-335 II.6.2.1.3 and the runtime's StrongNameSignatureVerification: the DOS header and stub, the NT headers
// with CheckSum and the certificate directory entry zeroed, the section table, each section's raw data without the
// signature slot), RSA PKCS#1 v1.5 with the hash the key blob names, the ECMA neutral key replaced by the platform
// key, and enhanced strong naming (AssemblySignatureKeyAttribute: its key signs once its counter-signature by the
// identity key checks out). Only .NET's own crypto (System.Security.Cryptography) is used.
using System.Reflection.Metadata;
using System.Reflection.PortableExecutable;
using System.Security.Cryptography;

static class StrongName
{
    // Microsoft's platform key (token b03f5f7f11d50a3a), which stands for the ECMA key.
    static readonly byte[] PlatformKey = Convert.FromHexString(
        "002400000480000094000000060200000024000052534131000400000100010007d1fa57c4aed9f0a32e84aa0faefd0de9e8fd6aec8f87fb03766c834c99921eb23be79ad9d5dcc1dd9ad236132102900b723cf980957fc4e177108fc607774f29e8320e92ea05ece4e821c0a5efe8f1645c4c0c93c1ab99285d622caa652c1dfad63d745d6f2de5f17e5eaf0fc4963d261c8a12436518206dc093344d5ad293");
    static readonly byte[] EcmaKey = [0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0];

    public static string State(PEReader pe, MetadataReader md, byte[] file, Func<CustomAttribute, string> typeName)
    {
        var cor = pe.PEHeaders.CorHeader!;
        var identity = md.IsAssembly ? md.GetBlobBytes(md.GetAssemblyDefinition().PublicKey) : [];
        if (identity.Length == 0) return "unsigned";
        var slot = cor.StrongNameSignatureDirectory;
        if (slot.Size == 0 || slot.RelativeVirtualAddress == 0) return "invalid-signature";
        if (!pe.PEHeaders.TryGetDirectoryOffset(slot, out int slotAt)) return "invalid-signature";
        var signature = file.AsSpan(slotAt, slot.Size).ToArray();
        if (signature.All(b => b == 0)) return (cor.Flags & CorFlags.StrongNameSigned) != 0 ? "public-signed" : "delay-signed";

        var identityKey = identity.SequenceEqual(EcmaKey) ? PlatformKey : identity;
        var signingKey = identityKey;
        foreach (var h in md.GetAssemblyDefinition().GetCustomAttributes())
        {
            var attribute = md.GetCustomAttribute(h);
            if (typeName(attribute) != "System.Reflection.AssemblySignatureKeyAttribute") continue;
            var value = md.GetBlobReader(attribute.Value);
            if (value.ReadUInt16() != 1) return "invalid-signature";
            var keyHex = value.ReadSerializedString();
            var counterHex = value.ReadSerializedString();
            if (keyHex == null || counterHex == null) return "invalid-signature";
            var signatureKey = Convert.FromHexString(keyHex);
            var counter = Convert.FromHexString(counterHex);
            Array.Reverse(counter);
            if (!Verify(identityKey, signatureKey, counter)) return "invalid-signature";
            signingKey = signatureKey;
        }
        Array.Reverse(signature);
        return Verify(signingKey, SignedContent(pe, file, slotAt, slot.Size), signature) ? "signed" : "invalid-signature";
    }

    static byte[] SignedContent(PEReader pe, byte[] file, int slotAt, int slotSize)
    {
        var headers = pe.PEHeaders;
        int lfanew = BitConverter.ToInt32(file, 0x3c);
        int optionalAt = lfanew + 4 + 20;
        int optionalSize = headers.CoffHeader.SizeOfOptionalHeader;
        using var content = new MemoryStream();
        content.Write(file, 0, lfanew);
        var nt = file.AsSpan(lfanew, 4 + 20 + optionalSize).ToArray();
        Array.Clear(nt, optionalAt - lfanew + 64, 4); // CheckSum
        int certificateEntry = optionalAt - lfanew + (headers.PEHeader!.Magic == PEMagic.PE32Plus ? 144 : 128);
        Array.Clear(nt, certificateEntry, 8);
        content.Write(nt);
        content.Write(file, optionalAt + optionalSize, headers.SectionHeaders.Length * 40);
        foreach (var s in headers.SectionHeaders)
        {
            int start = s.PointerToRawData, end = s.PointerToRawData + s.SizeOfRawData;
            if (s.SizeOfRawData == 0) continue;
            if (slotAt >= end || slotAt + slotSize <= start) { content.Write(file, start, end - start); continue; }
            content.Write(file, start, slotAt - start);
            content.Write(file, slotAt + slotSize, end - slotAt - slotSize);
        }
        return content.ToArray();
    }

    // RSA PKCS#1 v1.5 over `data` with the key of a public key blob (12-byte header, PUBLICKEYSTRUC, RSAPUBKEY,
    // little-endian modulus) and the hash algorithm its HashAlgID names.
    static bool Verify(byte[] blob, byte[] data, byte[] signature)
    {
        uint hashAlgId = BitConverter.ToUInt32(blob, 4);
        int bits = BitConverter.ToInt32(blob, 12 + 8 + 4);
        uint exponent = BitConverter.ToUInt32(blob, 12 + 8 + 8);
        var modulus = blob.AsSpan(12 + 20, bits / 8).ToArray();
        Array.Reverse(modulus);
        var e = BitConverter.GetBytes(exponent).Reverse().SkipWhile(b => b == 0).ToArray();
        using var rsa = RSA.Create();
        rsa.ImportParameters(new RSAParameters { Modulus = modulus, Exponent = e });
        var hash = hashAlgId switch
        {
            0x800c => HashAlgorithmName.SHA256,
            0x800d => HashAlgorithmName.SHA384,
            0x800e => HashAlgorithmName.SHA512,
            _ => HashAlgorithmName.SHA1,
        };
        try { return rsa.VerifyData(data, signature, hash, RSASignaturePadding.Pkcs1); }
        catch (CryptographicException) { return false; }
    }
}
