// SG601 option-not-licensed: a key's optionId is not among the organization's licenses (online check).
import { defineRule } from './types.js';

export default defineRule({
  id: 'SG601',
  name: 'option-not-licensed',
  scope: 'set',
  defaultSeverity: 'error',
  summary: "The key file's option is not among the license entries the signing service lists for the organization.",
  hint: 'Use the <optionId>_public.snk of an option your organization holds (see `signgate licenses`), or ask the vendor to add the option.',
  check: ({ settings }) => {
    const licensed = settings.licensedOptionIds;
    if (!licensed || licensed.length === 0) return [];
    return settings.keys
      .filter((k) => k.optionId === null || !licensed.includes(k.optionId))
      .map((k) => ({
        file: k.source,
        message:
          k.optionId === null
            ? `${k.source} is not named <optionId>_public.snk, so its option cannot be matched with the licenses (${licensed.join(', ')})`
            : `option ${k.optionId} (${k.source}) is not licensed; the organization holds ${licensed.join(', ')}`,
        data: { optionId: k.optionId, licensed },
      }));
  },
});
