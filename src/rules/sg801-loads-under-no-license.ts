// SG801 loads-under-no-license: as built, the vendor's host would load the API program under neither license.
import { describeTarget, loadsUnder, loadVerdict } from './load.js';
import { defineRule } from './types.js';

export default defineRule({
  id: 'SG801',
  name: 'loads-under-no-license',
  scope: 'file',
  defaultSeverity: 'note',
  // Before the upload a delay-signed .NET Framework file loads under neither license: that is the expected state,
  // not news for the gate. The audit predicts loading on its own; a check reports it when the configuration asks.
  enabledByDefault: false,
  summary:
    "As built, the API program loads under neither the vendor's runtime license (signed by the service) nor the developer license (unsigned), for example a delay-signed .NET Framework assembly.",
  hint: 'Expected before signing: the file the service returns loads under the runtime license. To run this build under the developer license, register its key for verification skipping on the test machine (sn -Vr *,<token>) or build it without a strong name.',
  check: ({ facts, settings }) => {
    const verdict = loadVerdict(facts, settings);
    if (!verdict || !verdict.apiProgram || loadsUnder(verdict) !== 'neither') return [];
    const token = facts.status().publicKeyToken;
    return [
      {
        message: `as built it loads under neither license (${describeTarget(verdict.target)}): runtime license: ${verdict.runtimeLicense.why}; developer license: ${verdict.developerLicense.why}`,
        ...(token && verdict.netFramework && !verdict.netFramework.loads && facts.status().state !== 'invalid-signature'
          ? {
              hint: `Expected before signing: the file the service returns loads under the runtime license. To run this build under the developer license, register its key for verification skipping on the test machine (sn -Vr *,${token}, as administrator) or build it without a strong name.`,
            }
          : {}),
        data: {
          target: verdict.target,
          runtimeLicense: verdict.runtimeLicense.loads,
          developerLicense: verdict.developerLicense.loads,
          netFramework: verdict.netFramework?.loads ?? null,
        },
      },
    ];
  },
});
