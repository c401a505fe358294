// SG208 authenticode-before-strong-name: the file to upload already carries an Authenticode signature, which the
// service's strong-name signing will break (it rewrites the signature slot, the flag and the checksum, all covered).
import { defineRule } from './types.js';

export default defineRule({
  id: 'SG208',
  name: 'authenticode-before-strong-name',
  scope: 'file',
  defaultSeverity: 'warning',
  summary: 'The assembly already carries an Authenticode signature; strong-name signing by the service will invalidate it.',
  hint: 'Sign with signtool (or osslsigncode) after the strong-name-signed files come back from the service, not before the upload.',
  check: ({ facts }) => {
    if (!facts.module) return [];
    const info = facts.authenticode();
    if (info.state === 'absent') return [];
    const who = info.publisher ? ` by ${info.publisher}` : '';
    const state = info.state === 'valid' ? 'valid now' : info.state === 'invalid' ? `already invalid: ${info.reason}` : `unreadable: ${info.reason}`;
    return [
      {
        message: `carries an Authenticode signature${who} (${state}); the service's strong-name signing changes bytes it covers, so the signed file will come back with a broken Authenticode signature`,
        location: { fileOffset: info.table?.fileOffset ?? 0 },
        data: { state: info.state, publisher: info.publisher },
      },
    ];
  },
});
