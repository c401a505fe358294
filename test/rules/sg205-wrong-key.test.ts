// SG205 wrong-key: the assembly's public key is none of the configured keys (the whole blob); a key pair where the
// option's public key file belongs; online, a key file that is not the key the service holds for its option.
import rule from '../../src/rules/sg205-wrong-key.js';
import { expectedKey } from '../helpers/check.js';
import { ruleTable } from '../helpers/rule-table.js';

const API = 'fixtures/sdk/bin/wrong-turns/VendorCopied/Contoso.AddinApi.dll';
const option = expectedKey('test-keys/12345_public.snk');
const option67890 = expectedKey('test-keys/67890_public.snk', 67890);
const other = expectedKey('test-keys/other_public.snk', null);
const sha256Header = expectedKey('test-keys/12345_sha256header_public.snk');
const pair = { ...expectedKey('test-keys/12345_keypair.snk'), keyPair: true };
const expected = `expected ${option.token} (test-keys/12345_public.snk)`;

ruleTable(rule, {
  valid: [
    { name: 'delay-signed with the option key', paths: ['fixtures/addin'] },
    { name: 'with several keys, a file delay-signed with any of them', paths: ['fixtures/findings/wrong-key'], settings: { keys: [option, other] } },
    {
      name: "another option's build with that option's key given",
      paths: ['fixtures/sdk/bin/wrong-turns/OtherOption', API],
      settings: { keys: [option, option67890] },
    },
    {
      name: 'online: the service reports the same token for the option',
      paths: ['fixtures/findings/passing'],
      settings: { licensedOptionIds: [12345], licensedKeyTokens: [{ optionId: 12345, token: option.token }] },
    },
    { name: 'no public key at all (SG201)', paths: ['fixtures/findings/not-delay-signed'] },
    { name: 'no key configured: nothing to compare with', paths: ['fixtures/findings/wrong-key'], settings: { keys: [] } },
    { name: 'a library with another key that needs no signing', paths: ['fixtures/findings/passing', 'fixtures/assemblies/signed-other-key.dll'] },
  ],
  invalid: [
    {
      name: 'delay-signed with another key',
      paths: ['fixtures/findings/wrong-key'],
      reports: [
        {
          ruleId: 'SG205',
          severity: 'error',
          message: `the assembly is delay-signed with another key: key token ${other.token}, ${expected}`,
          file: 'fixtures/findings/wrong-key/FindingAddin.dll',
          hint: '<AssemblyOriginatorKeyFile>12345_public.snk</AssemblyOriginatorKeyFile>',
          data: { token: other.token, expected: [option.token] },
        },
      ],
    },
    {
      name: 'fully signed with another key',
      paths: ['fixtures/findings/signed-with-other-key'],
      reports: [
        {
          ruleId: 'SG205',
          severity: 'error',
          message: `the assembly is fully signed (not delay-signed) with another key: key token ${other.token}, ${expected}`,
          file: 'fixtures/findings/signed-with-other-key/FindingAddin.dll',
          hint: 'a public key file alone is compiler error CS7032',
        },
      ],
    },
    {
      name: 'the same RSA key with a sha256 hash-algorithm header (Mono build and SDK build)',
      paths: ['fixtures/findings/wrong-key-hash-header', 'fixtures/sdk/bin/wrong-turns/Sha256Key', API],
      reports: ['fixtures/findings/wrong-key-hash-header/FindingAddin.dll', 'fixtures/sdk/bin/wrong-turns/Sha256Key/WrongTurn.Sha256Key.dll'].map((file) => ({
        ruleId: 'SG205',
        severity: 'error' as const,
        message: `the assembly has key token ${sha256Header.token}, ${expected}: the RSA key is the same but the hash-algorithm header differs (sha256 in the assembly, sha1 in test-keys/12345_public.snk)`,
        file,
        hint: 'do not convert the key to another hash algorithm',
      })),
    },
    {
      name: "another option's build, that option's key not given",
      paths: ['fixtures/sdk/bin/wrong-turns/OtherOption', API],
      reports: [
        {
          ruleId: 'SG205',
          severity: 'error',
          message: `delay-signed with another key: key token ${option67890.token}, ${expected}`,
          file: 'fixtures/sdk/bin/wrong-turns/OtherOption/WrongTurn.OtherOption.dll',
        },
      ],
    },
    {
      name: 'a key file not named <optionId>_public.snk: the hint says it may be the wrong file',
      paths: ['fixtures/findings/passing'],
      settings: { keys: [other] },
      reports: [
        {
          ruleId: 'SG205',
          severity: 'error',
          message: `key token ${option.token}, expected ${other.token} (test-keys/other_public.snk)`,
          file: 'fixtures/findings/passing/FindingAddin.dll',
          hint: "If test-keys/other_public.snk is not your option's public key file",
        },
      ],
    },
    {
      name: 'signed with the key pair given as the key file: on the assembly and on the key file',
      paths: ['fixtures/sdk/bin/wrong-turns/FullKeyPair', API],
      settings: { keys: [pair] },
      reports: [
        {
          ruleId: 'SG205',
          severity: 'error',
          message: `the assembly is fully signed with the key pair in test-keys/12345_keypair.snk (key token ${option.token})`,
          file: 'fixtures/sdk/bin/wrong-turns/FullKeyPair/WrongTurn.FullKeyPair.dll',
          data: { keyPair: true },
        },
        { ruleId: 'SG205', severity: 'error', message: 'the key file test-keys/12345_keypair.snk holds a key pair', file: 'test-keys/12345_keypair.snk' },
      ],
    },
    {
      name: 'delay-signed with another key while the key file is a key pair',
      paths: ['fixtures/findings/wrong-key'],
      settings: { keys: [pair] },
      reports: [
        {
          ruleId: 'SG205',
          severity: 'error',
          message: "test-keys/12345_keypair.snk holds a key pair, not an option's public key file",
          file: 'fixtures/findings/wrong-key/FindingAddin.dll',
        },
        { ruleId: 'SG205', severity: 'error', message: 'holds a key pair (its private key too)', file: 'test-keys/12345_keypair.snk' },
      ],
    },
    {
      name: 'online: the key file is not the key the service reports for option 12345',
      paths: ['fixtures/findings/passing'],
      settings: { licensedOptionIds: [12345], licensedKeyTokens: [{ optionId: 12345, token: other.token }] },
      reports: [
        {
          ruleId: 'SG205',
          severity: 'error',
          message: `the assembly has key token ${option.token}, the key of test-keys/12345_public.snk, but the signing service's option 12345 has key token ${other.token}`,
          file: 'fixtures/findings/passing/FindingAddin.dll',
          hint: 'signgate licenses --public-key 12345',
        },
        {
          ruleId: 'SG205',
          severity: 'error',
          message: `the key file test-keys/12345_public.snk has key token ${option.token}, but the signing service's option 12345 has key token ${other.token}`,
          file: 'test-keys/12345_public.snk',
          data: { optionId: 12345, serviceToken: other.token },
        },
      ],
    },
    {
      name: 'online: the assembly carries the key the service reports for another option',
      paths: ['fixtures/sdk/bin/wrong-turns/OtherOption', API],
      settings: {
        licensedOptionIds: [12345, 67890],
        licensedKeyTokens: [
          { optionId: 12345, token: option.token },
          { optionId: 67890, token: option67890.token },
        ],
      },
      reports: [
        {
          ruleId: 'SG205',
          severity: 'error',
          message: `the assembly has key token ${option67890.token}, the key of the signing service's option 67890, but the key files given hold ${option.token}`,
          file: 'fixtures/sdk/bin/wrong-turns/OtherOption/WrongTurn.OtherOption.dll',
          data: { optionId: 67890 },
        },
      ],
    },
  ],
});
