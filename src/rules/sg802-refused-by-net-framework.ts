// SG802 refused-by-net-framework: a file nobody is going to sign will not load on .NET Framework as built.
import { describeTarget, netFrameworkRefusal } from './load.js';
import { folderArgument } from '../core/shown-paths.js';
import { defineRule, needsSigning, type FileFacts } from './types.js';

/** What to do, by strong-name state: sign it with the pair its key belongs to, or ship a signed build. */
function hintFor(facts: FileFacts, token: string): string {
  const name = facts.assemblyName!;
  const fixCommand = `signgate fix ${folderArgument(facts.input.path)} --key <pair.snk> --in-place`;
  if (facts.status().state === 'invalid-signature') {
    return `Sign ${name} again after the tool that changed it, with the key pair of token ${token} (${fixCommand}, or sn -R), or ship its unchanged signed build.`;
  }
  return `Sign ${name} with the key pair of token ${token} (${fixCommand}; signgate resign or sn -R for one file), or ship a signed build of it. A dependency without a strong name of its own wants your own key pair (signgate fix --key), not an option's public key. If token ${token} is the key of another license option of yours, pass its <optionId>_public.snk with --key as well: the service then signs it.`;
}

export default defineRule({
  id: 'SG802',
  name: 'refused-by-net-framework',
  scope: 'file',
  allFiles: true,
  defaultSeverity: 'error',
  summary:
    'A file that the service is not going to sign targets .NET Framework (or .NET Standard) and is delay-signed, public-signed or signed with a signature that does not match its bytes: .NET Framework refuses to load it.',
  hint: 'Sign the file with the key pair whose public key it carries (signgate fix <folder> --key <pair.snk> --in-place), or ship a signed build of it.',
  check: ({ facts }) => {
    // Files the service signs become loadable there (or are reported by SG202/SG204); the vendor's own assemblies
    // are not shipped (SG501); a netmodule has no strong name of its own.
    if (needsSigning(facts.role) || facts.role.kind === 'vendor' || facts.role.kind === 'module') return [];
    const refusal = netFrameworkRefusal(facts);
    if (!refusal) return [];
    const status = facts.status();
    const token = status.publicKeyToken ?? '<token>';
    const why =
      status.state === 'invalid-signature'
        ? `its strong-name signature (key token ${token}) does not match its bytes`
        : `${status.state} with key token ${token}, which is not the key of a configured option, so the service will not sign it`;
    return [
      {
        message: `targets ${describeTarget(refusal.target)}${refusal.target.kind === 'standard' ? ', which .NET Framework loads too' : ''}: ${why}; .NET Framework refuses to load it (FileLoadException, strong name validation failed)`,
        hint: hintFor(facts, token),
        ...(status.slot ? { location: { fileOffset: status.slot.fileOffset, length: status.slot.size } } : {}),
        data: { state: status.state, token: status.publicKeyToken, target: refusal.target },
      },
    ];
  },
});
