// SG602 no-license: the organization holds no license entry at all (online check).
import { defineRule } from './types.js';

export default defineRule({
  id: 'SG602',
  name: 'no-license',
  scope: 'set',
  defaultSeverity: 'error',
  summary: 'The signing service lists no license entry for the organization; it cannot sign anything.',
  hint: 'Ask the vendor for a pre-signing license option, or check that the access token belongs to the right organization.',
  check: ({ settings }) =>
    settings.licensedOptionIds && settings.licensedOptionIds.length === 0
      ? [{ message: 'GET /licenses returned an empty list: the organization holds no pre-signing key' }]
      : [],
});
