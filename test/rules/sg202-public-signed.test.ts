// SG202 public-signed: the STRONGNAMESIGNED flag over an empty signature slot, on a file that must be uploaded.
import rule from '../../src/rules/sg202-public-signed.js';
import { ruleTable } from '../helpers/rule-table.js';

const API = 'fixtures/sdk/bin/wrong-turns/VendorCopied/Contoso.AddinApi.dll';
const MESSAGE = 'the STRONGNAMESIGNED flag is set but the signature slot is empty (public signing)';

ruleTable(rule, {
  valid: [
    { name: 'the delay-signed add-in folder', paths: ['fixtures/addin'] },
    { name: 'fully signed with the organization key', paths: ['fixtures/findings/already-signed'] },
    { name: 'not strong-named at all (SG201)', paths: ['fixtures/findings/not-delay-signed'] },
    { name: 'a signature that does not verify (SG204)', paths: ['fixtures/findings/invalid-signature'] },
    { name: 'the SDK net48 build, delay-signed', paths: ['fixtures/sdk/bin/net48', API] },
  ],
  invalid: [
    {
      name: 'the Mono-built public-signed add-in',
      paths: ['fixtures/findings/public-signed'],
      reports: [{ ruleId: 'SG202', severity: 'error', message: MESSAGE, file: 'fixtures/findings/public-signed/FindingAddin.dll' }],
    },
    {
      name: 'the SDK-built add-in with <PublicSign>true</PublicSign>',
      paths: ['fixtures/sdk/bin/wrong-turns/PublicSign', API],
      reports: [{ ruleId: 'SG202', severity: 'error', message: MESSAGE, file: 'fixtures/sdk/bin/wrong-turns/PublicSign/WrongTurn.PublicSign.dll' }],
    },
    {
      name: 'a public-signed helper with the option key, uploaded with the add-in',
      paths: ['fixtures/findings/passing', 'fixtures/variants/public-signed.dll'],
      reports: [{ ruleId: 'SG202', severity: 'error', message: 'the service expects a delay-signed assembly', file: 'fixtures/variants/public-signed.dll' }],
    },
  ],
});
