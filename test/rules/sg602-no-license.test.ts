// SG602 no-license (online): the service lists no license entry for the organization.
import rule from '../../src/rules/sg602-no-license.js';
import { ruleTable } from '../helpers/rule-table.js';

ruleTable(rule, {
  valid: [
    { name: 'offline: the licenses are not known', paths: ['fixtures/findings/passing'] },
    { name: 'one license', paths: ['fixtures/findings/passing'], settings: { licensedOptionIds: [12345] } },
    { name: 'a license of another option (SG601)', paths: ['fixtures/findings/passing'], settings: { licensedOptionIds: [67890] } },
  ],
  invalid: [
    {
      name: 'GET /licenses returned an empty list',
      paths: ['fixtures/findings/passing'],
      settings: { licensedOptionIds: [] },
      reports: [{ ruleId: 'SG602', severity: 'error', message: 'GET /licenses returned an empty list: the organization holds no pre-signing key', file: null }],
    },
    {
      name: 'whatever the inputs: the empty list is about the organization',
      paths: ['fixtures/vendor'],
      settings: { licensedOptionIds: [] },
      reports: [
        {
          ruleId: 'SG602',
          severity: 'error',
          message: 'the organization holds no pre-signing key',
          file: null,
          hint: 'Ask the vendor for a pre-signing license option',
        },
      ],
    },
  ],
});
