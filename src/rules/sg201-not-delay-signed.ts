// SG201 not-delay-signed: the assembly has no public key.
import { keyFileElement } from './key-match.js';
import { defineRule } from './types.js';

export default defineRule({
  id: 'SG201',
  name: 'not-delay-signed',
  scope: 'file',
  defaultSeverity: 'error',
  summary: 'The assembly is not strong-named at all: it carries no public key and no signature slot.',
  hint: 'Delay-sign it: in the .csproj set <SignAssembly>true</SignAssembly>, <DelaySign>true</DelaySign> and <AssemblyOriginatorKeyFile><optionId>_public.snk</AssemblyOriginatorKeyFile>.',
  check: ({ facts, settings }) => {
    const status = facts.status();
    if (status.state !== 'unsigned') return [];
    return [
      {
        message: `the assembly has no public key (${status.description})`,
        hint: `Delay-sign it: in the .csproj set <SignAssembly>true</SignAssembly>, <DelaySign>true</DelaySign> and ${keyFileElement(settings.keys)}.`,
        data: { state: status.state, details: status.details },
      },
    ];
  },
});
