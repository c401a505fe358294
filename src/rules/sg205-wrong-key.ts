// SG205 wrong-key: the assembly's public key is not the key of any configured option, byte for byte; online, also a
// key file whose key is not the one the service reports for its option.
import { sameRsaKey } from '../strongname/key-blob.js';
import { publicKeyToken } from '../strongname/token.js';
import { keyFileElement, publicKeyCommand, sameKeyBlob } from './keys.js';
import { defineRule } from './types.js';

/** The fix when a key file is not the service's key of its option: fetch the right one over it, then rebuild. */
const fetchKeyHint = (optionId: number, keyFile: string) => `Fetch the option's public key file from the service, ${publicKeyCommand(optionId, keyFile)}, then rebuild the add-in with it.`;

export default defineRule({
  id: 'SG205',
  name: 'wrong-key',
  scope: 'file',
  defaultSeverity: 'error',
  summary: "The assembly's public key is not the organization's key from <optionId>_public.snk (the whole blob, hash-algorithm header included); online, a key file's key is not the one the signing service holds for its option.",
  hint: 'Delay-sign with the public key file of your license option: <AssemblyOriginatorKeyFile><optionId>_public.snk</AssemblyOriginatorKeyFile>.',
  check: ({ facts, settings }) => {
    const status = facts.status();
    const key = status.publicKey;
    if (!key || settings.keys.length === 0) return [];
    const matched = settings.keys.find((k) => sameKeyBlob(k.publicKey, key));
    if (matched) {
      // Online: the key file the assembly was delay-signed with is not the key the service holds for its option.
      const service = settings.licensedKeyTokens?.find((r) => r.optionId === matched.optionId);
      if (!service || service.token === matched.token) return [];
      return [
        {
          message: `the assembly has key token ${matched.token}, the key of ${matched.source}, but the signing service's option ${service.optionId} has key token ${service.token}`,
          hint: fetchKeyHint(service.optionId, matched.source),
          ...(facts.module?.assemblyPublicKeyLocation ? { location: facts.module.assemblyPublicKeyLocation } : {}),
          data: { token: matched.token, expected: [service.token] },
        },
      ];
    }
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
  // Online against a service that reports each option's key token: the key files themselves, before any upload.
  checkSet: ({ settings }) => {
    const reported = settings.licensedKeyTokens;
    if (!reported) return [];
    return settings.keys.flatMap((k) => {
      const service = reported.find((r) => r.optionId === k.optionId);
      if (!service || service.token === k.token) return [];
      return [
        {
          message: `the key file ${k.source} has key token ${k.token}, but the signing service's option ${service.optionId} has key token ${service.token}: the service would refuse every assembly delay-signed with this file`,
          hint: fetchKeyHint(service.optionId, k.source),
          file: k.source,
          data: { optionId: service.optionId, token: k.token, serviceToken: service.token },
        },
      ];
    });
  },
});
