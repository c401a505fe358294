// SG205 wrong-key: the assembly's public key is not the key of any configured option, byte for byte; online, also a
// key file whose key is not the one the service reports for its option.
import { sameKeyBlob, sameRsaKey } from '../strongname/key-blob.js';
import { publicKeyToken } from '../strongname/key-token.js';
import { keyFileName, publicKeyCommand } from './key-match.js';
import { defineRule, type ExpectedKey, type LicensedKeyToken } from './types.js';

/** The command that fetches an option's public key file into a file that is not there yet (never the key file given). */
const fetchCommand = (service: LicensedKeyToken) => publicKeyCommand(service.optionId, service.saveAs ?? `${service.optionId}_public.snk`);

/** The fix when a key file is not the service's key of its option: fetch the right one beside it, then rebuild. */
const fetchKeyHint = (service: LicensedKeyToken, keyFile: string) =>
  `Fetch the option's public key file from the service into a new file, ${fetchCommand(service)} (${keyFile} stays as it is), ` +
  'then delay-sign the add-in with it and pass it with --key.';

/** How the assembly holds a key, by its strong-name state. */
const STATE_WORDS: Partial<Record<string, string>> = {
  'delay-signed': 'is delay-signed with another key:',
  signed: 'is fully signed (not delay-signed) with another key:',
  'invalid-signature': 'is signed with another key, and the signature does not verify:',
  'public-signed': 'is public-signed with another key:',
};

/**
 * The properties of an SDK project that delay-sign with `key`, the path as the project names it (relative to the
 * folder the check runs in: the project's, in a build).
 */
function projectFix(key: ExpectedKey | undefined): string {
  return `<SignAssembly>true</SignAssembly> <DelaySign>true</DelaySign> <AssemblyOriginatorKeyFile>${keyFileName(key)}</AssemblyOriginatorKeyFile>`;
}

/** The other options' key files, when several are given. */
const otherOptions = (keys: readonly ExpectedKey[]) => {
  const others = [...new Set(keys.slice(1).map(keyFileName))].filter((n) => n !== keyFileName(keys[0]));
  return others.length ? ` (Or ${others.join(' or ')} for another license option.)` : '';
};

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
    if (matched?.keyPair && status.state === 'signed') {
      // Fully signed with the pair the key file holds: the pair is in the build (and reported with the key file below).
      return [
        {
          message: `the assembly is fully signed with the key pair in ${matched.source} (key token ${matched.token}): the private key is in the build, where the option's public key file belongs, and the service signs only a delay-signed assembly`,
          hint: `Delay-sign it with the option's public key file instead: ${projectFix(matched)}; then replace ${matched.source} by that public key file (see the finding on the key file).`,
          ...location,
          data: { token: matched.token, expected: [matched.token], keyPair: true },
        },
      ];
    }
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
    // How the assembly holds the other key, said once: each state has its own sentence and the whole fix.
    const held = STATE_WORDS[status.state] ?? 'has';
    const data = { token, expected: settings.keys.map((k) => k.token) };
    if (sameRsa) {
      return [
        {
          message:
            `the assembly has key token ${token}, expected ${expected}: the RSA key is the same but the hash-algorithm header differs ` +
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
            `the assembly ${held} key token ${token}, expected ${expected}; ` +
            `${which} ${pairs.length === 1 ? 'holds a key pair' : 'hold key pairs'}, not an option's public key file`,
          hint:
            'Pass --key the public key file of your license option (<optionId>_public.snk, from the vendor or ' +
            '`signgate licenses --public-key <optionId>`), not a key pair: a key pair of your own strong-names dependencies (signgate fix), ' +
            "never the add-in. If the add-in is not delay-signed with the option's key either, delay-sign it with that file: " +
            `${projectFix(undefined)}.`,
          ...location,
          data,
        },
      ];
    }
    const first = settings.keys[0];
    const fix =
      status.state === 'signed' || status.state === 'invalid-signature'
        ? `The service signs only an assembly delay-signed with the option's public key: delay-sign it instead, ${projectFix(first)} (DelaySign must change too: a public key file alone is compiler error CS7032); a key pair of your own is for dependencies (signgate fix, SigngateFixKey in a build), never the add-in.`
        : status.state === 'public-signed'
          ? `Delay-sign it with the public key file of your license option: ${projectFix(first)}, and <PublicSign>false</PublicSign>.`
          : `Delay-sign it with the public key file of your license option: ${projectFix(first)}.`;
    return [
      {
        message: `the assembly ${held} key token ${token}, expected ${expected}`,
        hint: fix + otherOptions(settings.keys) + unnamed(settings.keys),
        ...location,
        data,
      },
    ];
  },
  // The key files themselves, before any upload: a key pair where the option's public key file belongs (in every
  // build: the pair would otherwise be found only at the upload), and, online against a service that reports each
  // option's key token, a file whose key is not the option's.
  checkSet: ({ settings }) => {
    const pairs = settings.keys
      .filter((k) => k.keyPair)
      .map((k) => {
        const path = keyFileName(k);
        const id = k.optionId ?? '<optionId>';
        return {
          message: `the key file ${k.source} holds a key pair (its private key too) where the option's public key file belongs; a pair made with sn -k is a key of your own, not the option's`,
          hint:
            `Put the option's public key file at ${path}: from the service, ${publicKeyCommand(k.optionId ?? 0, path).replace('--public-key 0', `--public-key ${id}`)} (or the file the vendor sent); ` +
            `if the pair is the option's own, move it out of the repository and write its public key in its place: \`sn -p <the pair's new path> ${path}\`. ` +
            'Keep key pairs out of the repository and the build: a pair of your own strong-names dependencies (SigngateFixKey), never the add-in.',
          file: k.source,
          data: { token: k.token, keyPair: true },
        };
      });
    const reported = settings.licensedKeyTokens;
    if (!reported) return pairs;
    return [
      ...pairs,
      ...settings.keys.flatMap((k) => {
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
      }),
    ];
  },
});
