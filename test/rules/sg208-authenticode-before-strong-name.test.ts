// SG208 authenticode-before-strong-name: a file to upload already carries an Authenticode signature. The signed
// files are made from the sample add-in with Debian's osslsigncode and a TEST ONLY PKI (test/helpers/authenticode.ts).
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe } from 'vitest';
import rule from '../../src/rules/sg208-authenticode-before-strong-name.js';
import { parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { signAssembly } from '../../src/strongname/strong-name.js';
import { readModule } from '../../src/strongname/well-formed.js';
import { authenticodeSign, hasOsslsigncode, makeTestPki, removeTestPki, type TestPki } from '../helpers/authenticode.js';
import { fixture, fixturePath, scratchFolder } from '../helpers/fixtures.js';
import { withOverlay } from '../helpers/pe-shapes.js';
import { ruleTable } from '../helpers/rule-table.js';

const PUBLISHER = 'Contoso Rule Table';
const SUBJECT = `CN=signgate TEST ONLY Code Signing, O=${PUBLISHER}`;
const { dir, save } = scratchFolder('signgate-sg208-');
const at = (name: string) => join(dir, name);
/** Where osslsigncode writes `name` (it writes no file that exists; its folder must). */
const output = (name: string) => {
  mkdirSync(dirname(at(name)), { recursive: true });
  return at(name);
};

describe.runIf(hasOsslsigncode)('with osslsigncode and a TEST ONLY PKI', () => {
  let pki: TestPki | undefined;
  beforeAll(async () => {
    pki = await makeTestPki(PUBLISHER);
    await authenticodeSign(pki, fixturePath('addin/SampleAddin.dll'), output('valid/SampleAddin.dll'));
    const signed = new Uint8Array(readFileSync(at('valid/SampleAddin.dll')));
    // Bytes after the certificate table: Authenticode covers none of them, the signature counts as invalid.
    save('overlay/SampleAddin.dll', withOverlay(signed, new Uint8Array(16)));
    // Strong-name signed after Authenticode (what the service would do): the Authenticode hash no longer matches.
    save('strong-named-after/SampleAddin.dll', signAssembly(readModule(signed), parseStrongNameKeyFile(fixture('test-keys/12345_keypair.snk'))));
    // A library that needs no signing, Authenticode-signed: the rule looks only at the files to upload.
    await authenticodeSign(pki, fixturePath('addin/ThirdParty.Json.dll'), output('library/ThirdParty.Json.dll'));
  });
  afterAll(() => removeTestPki(pki));

  ruleTable(rule, {
    valid: [
      { name: 'the delay-signed add-in folder, no Authenticode', paths: ['fixtures/addin'] },
      { name: 'an Authenticode-signed library that is not uploaded', paths: ['fixtures/findings/passing', at('library/ThirdParty.Json.dll')] },
      { name: 'the SDK net48 build, no Authenticode', paths: ['fixtures/sdk/bin/net48', 'fixtures/sdk/bin/wrong-turns/VendorCopied/Contoso.AddinApi.dll'] },
    ],
    invalid: [
      {
        name: 'the add-in Authenticode-signed before the upload: valid now',
        paths: [at('valid/SampleAddin.dll')],
        reports: [
          {
            ruleId: 'SG208',
            severity: 'warning',
            message: `carries an Authenticode signature by ${SUBJECT} (valid now); the service's strong-name signing changes bytes it covers`,
            file: at('valid/SampleAddin.dll'),
            data: { state: 'valid', publisher: SUBJECT },
          },
        ],
      },
      {
        name: 'bytes appended after the certificate table: already invalid',
        paths: [at('overlay/SampleAddin.dll')],
        reports: [
          {
            ruleId: 'SG208',
            severity: 'warning',
            message: `by ${SUBJECT} (already invalid: 16 bytes follow the certificate table`,
            file: at('overlay/SampleAddin.dll'),
            data: { state: 'invalid' },
          },
        ],
      },
      {
        name: 'strong-name signed after Authenticode: already invalid',
        paths: [at('strong-named-after/SampleAddin.dll')],
        reports: [
          {
            ruleId: 'SG208',
            severity: 'warning',
            message: /\(already invalid: .*the file changed after Authenticode signing/,
            file: at('strong-named-after/SampleAddin.dll'),
            data: { state: 'invalid' },
          },
        ],
      },
    ],
  });
});
