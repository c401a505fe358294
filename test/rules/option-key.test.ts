// A file that carries an option's public key is signed by the service whether it uses the vendor API or not (role
// option-key, docs/rules.md "Which files are signed"); SG802 reports what nobody will sign.
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { collectFacts } from '../../src/rules/facts.js';
import { loadVerdict } from '../../src/rules/load.js';
import { checkPaths, defaultSettings, expectedKey, ruleNames } from '../helpers/check.js';
import { fixturePath } from '../helpers/fixtures.js';

const ADDIN = 'fixtures/findings/passing';
const HELPER = 'fixtures/assemblies/delay-1024.dll'; // delay-signed with option 12345's key, no vendor API
const OTHER_OPTION = 'fixtures/assemblies/delay-2048.dll'; // delay-signed with option 67890's key

describe('role option-key', () => {
  test('a helper delay-signed with the option key is uploaded with the add-in, needs no vendor attribute, and is no API program', async () => {
    const result = await checkPaths([ADDIN, HELPER]);
    expect(ruleNames(result)).toEqual([]);
    const helper = result.files.find((f) => f.path === HELPER)!;
    expect(helper).toMatchObject({ role: 'option-key', needsSigning: true, outcome: 'pass', upload: true });
    expect(helper.reason).toBe(
      "carries the public key of option 12345 (token 5d004f218731cd20), though it uses no vendor API: only the service's signature makes it validly signed",
    );
    const facts = collectFacts(
      [{ path: HELPER, uploadName: 'delay-1024.dll', bytes: readFileSync(fixturePath('assemblies/delay-1024.dll')), explicit: true }],
      defaultSettings(),
    ).get(HELPER)!;
    expect(loadVerdict(facts, defaultSettings())!.apiProgram).toBe(false);
  });

  test('alone it approves nothing: SG504 still asks for an API program', async () => {
    expect(ruleNames(await checkPaths([HELPER]))).toEqual(['nothing-to-sign']);
  });

  test('with a key of an option not given, it is no upload and .NET Framework refuses it: SG802; given, it is uploaded', async () => {
    const without = await checkPaths([ADDIN, OTHER_OPTION]);
    expect(ruleNames(without)).toEqual(['refused-by-net-framework']);
    expect(without.files.find((f) => f.path === OTHER_OPTION)).toMatchObject({ role: 'not-required', outcome: 'fail', upload: false });
    const finding = without.findings.find((f) => f.ruleId === 'SG802')!;
    expect(finding.hint).toContain('If token ');
    expect(finding.hint).toContain('pass its <optionId>_public.snk with --key as well');
    const given = await checkPaths([ADDIN, OTHER_OPTION], {
      keys: [expectedKey('test-keys/12345_public.snk'), expectedKey('test-keys/67890_public.snk', 67890)],
    });
    expect(ruleNames(given)).toEqual([]);
    expect(given.files.find((f) => f.path === OTHER_OPTION)).toMatchObject({
      role: 'option-key',
      upload: true,
      reason: expect.stringContaining('option 67890'),
    });
  });

  test('SG802 can be turned off like any rule', async () => {
    const off = await checkPaths([ADDIN, OTHER_OPTION], {}, { severities: { 'refused-by-net-framework': 'off' } });
    expect(ruleNames(off)).toEqual([]);
  });
});
