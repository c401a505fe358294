// SG205 wrong-key: the assembly's public key is not the key of any configured option, byte for byte; online, also a
// key file whose key is not the one the service reports for its option.
import { sameRsaKey } from '../strongname/key-blob.js';
import { publicKeyToken } from '../strongname/key-token.js';
import { keyFileElement, publicKeyCommand, sameKeyBlob } from './key-match.js';
import { defineRule, type ExpectedKey, type LicensedKeyToken } from './types.js';

/** The command that fetches an option's public key file into a file that is not there yet (never the key file given). */
const fetchCommand = (service: LicensedKeyToken) => publicKeyCommand(service.optionId, service.saveAs ?? `${service.optionId}_public.snk`);

/** The fix when a key file is not the service's key of its option: fetch the right one beside it, then rebuild. */
const fetchKeyHint = (service: LicensedKeyToken, keyFile: string) =>
  `Fetch the option's public key file from the service into a new file, ${fetchCommand(service)} (${keyFile} stays as it is), ` +
  'then delay-sign the add-in with it and pass it with --key.';

/** For key files whose name names no option: they may be the wrong file rather than the assembly the wrong build. */
const unnamed = (keys: readonly ExpectedKey[]) => {
  const files = keys.filter((k) => k.optionId === null).map((k) => k.source);
  return files.length
    ? ` If ${files.join(', ')} ${files.length === 1 ? 'is' : 'are'} not your option's public key file (<optionId>_public.snk, from the vendor), ` +
        'pass that file with --key instead.'
    : '';
};

export default defineRule({
  id: 'SG205',
  name: 'wrong-key',
  scope: 'file',
  defaultSeverity: 'error',
  summary:
    "The assembly's public key is not the organization's key from <optionId>_public.snk (the whole blob, hash-algorithm header included); online, a key file's key is not the one the signing service holds for its option.",
  hint: 'Delay-sign with the public key file of your license option: <AssemblyOriginatorKeyFile><optionId>_public.snk</AssemblyOriginatorKeyFile>.',
  check: ({ facts, settings }) => {
    const status = facts.status();
    const key = status.publicKey;
    if (!key || settings.keys.length === 0) return [];
    const location = facts.module?.assemblyPublicKeyLocation ? { location: facts.module.assemblyPublicKeyLocation } : {};
    const matched = settings.keys.find((k) => sameKeyBlob(k.publicKey, key));
    if (matched) {
      // Online: the key file the assembly was delay-signed with is not the key the service holds for its option.
      const service = settings.licensedKeyTokens?.find((r) => r.optionId === matched.optionId);
      if (!service || service.token === matched.token) return [];
      return [
        {
          message: `the assembly has key token ${matched.token}, the key of ${matched.source}, but the signing service's option ${service.optionId} has key token ${service.token}`,
          hint: fetchKeyHint(service, matched.source),
          ...location,
          data: { token: matched.token, expected: [service.token] },
        },
      ];
    }
    const token = publicKeyToken(key.blob);
    const expected = settings.keys.map((k) => `${k.token} (${k.source})`).join(' or ');
    const sameRsa = settings.keys.find((k) => sameRsaKey(k.publicKey, key));
    const signedNote = status.state === 'signed' ? ' and is already signed with it' : '';
    const data = { token, expected: settings.keys.map((k) => k.token) };
    if (sameRsa) {
      return [
        {
          message:
            `the assembly has key token ${token}${signedNote}, expected ${expected}: the RSA key is the same but the hash-algorithm header differs ` +
            `(${key.hashAlgorithm} in the assembly, ${sameRsa.publicKey.hashAlgorithm} in ${sameRsa.source})`,
          hint: `Delay-sign with ${sameRsa.source} exactly as it is; do not convert the key to another hash algorithm.`,
          ...location,
          data,
        },
      ];
    }
    // The assembly may be right and the --key file wrong: its key is an option's that the service reports, or the
    // file given is a key pair, which no option's public key file is.
    const option = settings.licensedKeyTokens?.find((r) => r.token === token);
    if (option) {
      return [
        {
          message: `the assembly has key token ${token}, the key of the signing service's option ${option.optionId}, but the key files given hold ${expected}`,
          hint:
            `The assembly is delay-signed with option ${option.optionId}'s key; the --key file is not that option's public key. ` +
            `Pass --key with option ${option.optionId}'s public key file; ${fetchCommand(option)} fetches it into a new file.`,
          ...location,
          data: { ...data, optionId: option.optionId },
        },
      ];
    }
    const pairs = settings.keys.filter((k) => k.keyPair);
    if (pairs.length) {
      const which = pairs.map((k) => k.source).join(', ');
      return [
        {
          message:
            `the assembly has key token ${token}${signedNote}, expected ${expected}; ` +
            `${which} ${pairs.length === 1 ? 'holds a key pair' : 'hold key pairs'}, not an option's public key file`,
          hint:
            'Pass --key the public key file of your license option (<optionId>_public.snk, from the vendor or ' +
            '`signgate licenses --public-key <optionId>`), not a key pair: a key pair of your own strong-names dependencies (signgate fix), ' +
            "never the add-in. If the add-in is not delay-signed with the option's key either, delay-sign it with that file: " +
            '<AssemblyOriginatorKeyFile><optionId>_public.snk</AssemblyOriginatorKeyFile>.',
          ...location,
          data,
        },
      ];
    }
    return [
      {
        message: `the assembly has key token ${token}${signedNote}, expected ${expected}`,
        hint:
          'The assembly is delay-signed with another key: delay-sign it with the public key file of your license option, ' +
          `${keyFileElement(settings.keys)}.` +
          unnamed(settings.keys),
        ...location,
        data,
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
          hint: fetchKeyHint(service, k.source),
          file: k.source,
          data: { optionId: service.optionId, token: k.token, serviceToken: service.token },
        },
      ];
    });
  },
});
