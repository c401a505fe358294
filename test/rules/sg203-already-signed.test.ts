// SG203 already-signed: validly signed with one of the organization's keys (a warning: sign skips it).
import rule from '../../src/rules/sg203-already-signed.js';
import { expectedKey } from '../helpers/check.js';
import { ruleTable } from '../helpers/rule-table.js';

const API = 'fixtures/sdk/bin/wrong-turns/VendorCopied/Contoso.AddinApi.dll';
const key = expectedKey('test-keys/12345_public.snk');

ruleTable(rule, {
  valid: [
    { name: 'the delay-signed add-in folder', paths: ['fixtures/addin'] },
    { name: 'fully signed with another key (SG205)', paths: ['fixtures/findings/signed-with-other-key'] },
    { name: 'signed with the organization key but the signature does not verify (SG204)', paths: ['fixtures/findings/invalid-signature'] },
    {
      name: 'signed with the pair given as the key file: wrong-key reports it, not already-signed',
      paths: ['fixtures/findings/already-signed'],
      settings: { keys: [{ ...expectedKey('test-keys/12345_keypair.snk'), keyPair: true }] },
    },
    { name: 'a library signed with another key that needs no signing', paths: ['fixtures/findings/passing', 'fixtures/assemblies/signed-other-key.dll'] },
  ],
  invalid: [
    {
      name: 'the add-in signed with option 12345 key pair',
      paths: ['fixtures/findings/already-signed'],
      reports: [
        {
          ruleId: 'SG203',
          severity: 'warning',
          message: `already signed with key token ${key.token} (option 12345)`,
          file: 'fixtures/findings/already-signed/FindingAddin.dll',
          data: { token: key.token, optionId: 12345 },
        },
      ],
    },
    {
      name: 'the SDK build signed with the full key pair',
      paths: ['fixtures/sdk/bin/wrong-turns/FullKeyPair', API],
      reports: [
        {
          ruleId: 'SG203',
          severity: 'warning',
          message: 'already signed with key token',
          file: 'fixtures/sdk/bin/wrong-turns/FullKeyPair/WrongTurn.FullKeyPair.dll',
        },
      ],
    },
    {
      name: 'helpers signed with the option key (sn, ilasm, PE32+), beside the add-in',
      paths: [
        'fixtures/findings/passing',
        'fixtures/assemblies/signed-1024.dll',
        'fixtures/assemblies/ilasm-signed.dll',
        'fixtures/assemblies/pe32plus-signed.dll',
      ],
      reports: ['fixtures/assemblies/ilasm-signed.dll', 'fixtures/assemblies/pe32plus-signed.dll', 'fixtures/assemblies/signed-1024.dll'].map((file) => ({
        ruleId: 'SG203',
        severity: 'warning' as const,
        message: `already signed with key token ${key.token}`,
        file,
      })),
    },
    {
      name: 'signed files whose checksum or overlay changed still verify',
      paths: ['fixtures/findings/passing', 'fixtures/variants/signed-checksum-changed.dll', 'fixtures/variants/signed-with-overlay.dll'],
      reports: ['fixtures/variants/signed-checksum-changed.dll', 'fixtures/variants/signed-with-overlay.dll'].map((file) => ({
        ruleId: 'SG203',
        severity: 'warning' as const,
        message: 'already signed',
        file,
      })),
    },
    {
      name: 'a key given without an option id: the message names no option',
      paths: ['fixtures/findings/already-signed'],
      settings: { keys: [expectedKey('test-keys/12345_public.snk', null)] },
      reports: [
        {
          ruleId: 'SG203',
          severity: 'warning',
          message: new RegExp(`^already signed with key token ${key.token}$`),
          file: 'fixtures/findings/already-signed/FindingAddin.dll',
        },
      ],
    },
  ],
});
