// SG601 option-not-licensed (online): a key file's option is not among the licenses the service lists.
import rule from '../../src/rules/sg601-option-not-licensed.js';
import { expectedKey } from '../helpers/check.js';
import { ruleTable } from '../helpers/rule-table.js';

const ADDIN = ['fixtures/findings/passing'];
const option = expectedKey('test-keys/12345_public.snk');
const option67890 = expectedKey('test-keys/67890_public.snk', 67890);
const unnamed = expectedKey('test-keys/other_public.snk', null);

ruleTable(rule, {
  valid: [
    { name: 'offline: no licenses to compare with', paths: ADDIN },
    { name: "the key's option is licensed", paths: ADDIN, settings: { licensedOptionIds: [12345] } },
    { name: 'every key file is of a licensed option', paths: ADDIN, settings: { keys: [option, option67890], licensedOptionIds: [67890, 12345] } },
    { name: 'no license at all is SG602, not SG601', paths: ADDIN, settings: { licensedOptionIds: [] } },
  ],
  invalid: [
    {
      name: 'option 12345 is not licensed',
      paths: ADDIN,
      settings: { licensedOptionIds: [67890] },
      reports: [
        {
          ruleId: 'SG601',
          severity: 'error',
          message: 'option 12345 (test-keys/12345_public.snk) is not licensed; the organization holds 67890',
          file: 'test-keys/12345_public.snk',
          data: { optionId: 12345, licensed: [67890] },
        },
      ],
    },
    {
      name: 'a key file not named <optionId>_public.snk cannot be matched',
      paths: ADDIN,
      settings: { keys: [option, unnamed], licensedOptionIds: [12345, 67890] },
      reports: [
        {
          ruleId: 'SG601',
          severity: 'error',
          message: 'test-keys/other_public.snk is not named <optionId>_public.snk, so its option cannot be matched with the licenses (12345, 67890)',
          file: 'test-keys/other_public.snk',
          data: { optionId: null },
        },
      ],
    },
    {
      name: 'two key files, one licensed: only the other is reported',
      paths: ADDIN,
      settings: { keys: [option, option67890], licensedOptionIds: [12345] },
      reports: [
        { ruleId: 'SG601', severity: 'error', message: 'option 67890 (test-keys/67890_public.snk) is not licensed', file: 'test-keys/67890_public.snk' },
      ],
    },
  ],
});
