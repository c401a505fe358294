// SG001 malformed: the file could not be read as a PE image with valid metadata.
import { defineRule } from './types.js';

export default defineRule({
  id: 'SG001',
  name: 'malformed',
  scope: 'file',
  allFiles: true,
  defaultSeverity: 'error',
  summary: 'The file cannot be read as a PE image with valid .NET metadata.',
  hint: 'Rebuild the file or remove it from the output; a damaged file cannot be signed or loaded.',
  check: ({ facts }) =>
    facts.readError
      ? [
          {
            message: `${facts.readError.code}: ${facts.readError.message}`,
            ...(facts.readError.fileOffset !== undefined ? { location: { fileOffset: facts.readError.fileOffset } } : {}),
            data: { code: facts.readError.code },
          },
        ]
      : [],
});
