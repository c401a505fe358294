// SG205 wrong-key: the assembly's public key is not the key of any configured option, byte for byte.
import { sameRsaKey } from '../strongname/key-blob.js';
import { publicKeyToken } from '../strongname/token.js';
import { keyFileElement, sameKeyBlob } from './keys.js';
import { defineRule } from './types.js';

export default defineRule({
  id: 'SG205',
  name: 'wrong-key',
  scope: 'file',
  defaultSeverity: 'error',
  summary: "The assembly's public key is not the organization's key from <optionId>_public.snk (the whole blob, hash-algorithm header included).",
  hint: 'Delay-sign with the public key file of your license option: <AssemblyOriginatorKeyFile><optionId>_public.snk</AssemblyOriginatorKeyFile>.',
  check: ({ facts, settings }) => {
    const status = facts.status();
    const key = status.publicKey;
    if (!key || settings.keys.length === 0) return [];
    if (settings.keys.some((k) => sameKeyBlob(k.publicKey, key))) return [];
    const token = publicKeyToken(key.blob);
    const expected = settings.keys.map((k) => `${k.token} (${k.source})`).join(' or ');
    const sameRsa = settings.keys.find((k) => sameRsaKey(k.publicKey, key));
    const signedNote = status.state === 'signed' ? ' and is already signed with it' : '';
    const message = sameRsa
      ? `the assembly has key token ${token}${signedNote}, expected ${expected}: the RSA key is the same but the hash-algorithm header differs (${key.hashAlgorithm} in the assembly, ${sameRsa.publicKey.hashAlgorithm} in ${sameRsa.source})`
      : `the assembly has key token ${token}${signedNote}, expected ${expected}`;
    return [
      {
        message,
        hint: sameRsa
          ? `Delay-sign with ${sameRsa.source} exactly as it is; do not convert the key to another hash algorithm.`
          : `Delay-sign with the public key file of your license option: ${keyFileElement(settings.keys)}.`,
        ...(facts.module?.assemblyPublicKeyLocation ? { location: facts.module.assemblyPublicKeyLocation } : {}),
        data: { token, expected: settings.keys.map((k) => k.token) },
      },
    ];
  },
});
