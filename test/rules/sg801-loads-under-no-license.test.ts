// SG801 loads-under-no-license: as built, an API program would load under neither license. Off by default (the
// delay-signed build before the upload is the expected state); the table runs it at its severity, a note.
import { expect, test } from 'vitest';
import rule from '../../src/rules/sg801-loads-under-no-license.js';
import { checkPaths, expectedKey } from '../helpers/check.js';
import { ruleTable } from '../helpers/rule-table.js';

const API = 'fixtures/sdk/bin/wrong-turns/VendorCopied/Contoso.AddinApi.dll';
const option = expectedKey('test-keys/12345_public.snk');
const NEITHER = 'as built it loads under neither license';

ruleTable(rule, {
  valid: [
    { name: 'the net8.0 build: .NET does not validate strong names, the developer license loads it', paths: ['fixtures/sdk/bin/net8.0', API] },
    { name: 'signed by the service with the organization key: the runtime license', paths: ['fixtures/findings/already-signed'] },
    { name: 'not strong-named: the developer license', paths: ['fixtures/sdk/bin/wrong-turns/NotSigned', API] },
    { name: 'a library that is no API program', paths: ['fixtures/addin/ThirdParty.Json.dll'] },
    { name: 'turned off explicitly', paths: ['fixtures/findings/passing'], severities: { SG801: 'off' } },
  ],
  invalid: [
    {
      name: 'the delay-signed Mono build for .NET Framework',
      paths: ['fixtures/findings/passing'],
      reports: [
        {
          ruleId: 'SG801',
          severity: 'note',
          message: `${NEITHER} (.NET Framework (references mscorlib)): runtime license: delay-signed, not signed by the service; developer license: delay-signed: .NET Framework refuses it`,
          file: 'fixtures/findings/passing/FindingAddin.dll',
          hint: `sn -Vr *,${option.token}, as administrator`,
          data: { runtimeLicense: false, developerLicense: false, netFramework: false },
        },
      ],
    },
    {
      name: 'the delay-signed SDK net48 build: every API program of it, the target from TargetFrameworkAttribute',
      paths: ['fixtures/sdk/bin/net48', API],
      reports: [
        { ruleId: 'SG801', severity: 'note', message: `${NEITHER} (.NETFramework,Version=v4.8)`, file: 'fixtures/sdk/bin/net48/SampleAddin.Helpers.dll' },
        { ruleId: 'SG801', severity: 'note', message: `${NEITHER} (.NETFramework,Version=v4.8)`, file: 'fixtures/sdk/bin/net48/SampleAddin.dll' },
        { ruleId: 'SG801', severity: 'note', message: NEITHER, file: 'fixtures/sdk/bin/net48/de/SampleAddin.resources.dll' },
      ],
    },
    {
      name: 'a signature that does not match its bytes: no sn -Vr advice for its token',
      paths: ['fixtures/findings/invalid-signature'],
      reports: [
        {
          ruleId: 'SG801',
          severity: 'note',
          message: 'runtime license: its signature does not match its bytes',
          file: 'fixtures/findings/invalid-signature/FindingAddin.dll',
          hint: /^Expected before signing: .*\(sn -Vr \*,<token>\)/,
        },
      ],
    },
    {
      name: 'the vendor attribute false: the runtime license says why',
      paths: ['fixtures/findings/vendor-attribute-false'],
      reports: [
        {
          ruleId: 'SG801',
          severity: 'note',
          message: 'runtime license: delay-signed, not signed by the service; vendor attribute false',
          file: 'fixtures/findings/vendor-attribute-false/FindingAddin.dll',
        },
      ],
    },
    {
      name: 'turned on as a warning by the configuration',
      paths: ['fixtures/findings/public-signed'],
      severities: { 'loads-under-no-license': 'warning' },
      reports: [{ ruleId: 'SG801', severity: 'warning', message: 'runtime license: public-signed', file: 'fixtures/findings/public-signed/FindingAddin.dll' }],
    },
  ],
});

test('SG801 is off unless the configuration asks for it: the same delay-signed input gives no note', async () => {
  expect(rule.enabledByDefault).toBe(false);
  const result = await checkPaths(['fixtures/findings/passing']);
  expect(result.findings.filter((f) => f.ruleId === rule.id)).toEqual([]);
});
