// SG001 malformed: the one well-formedness verdict (strongname/well-formed.ts) refused the file: its error and offset.
import { defineRule } from './types.js';

export default defineRule({
  id: 'SG001',
  name: 'malformed',
  scope: 'file',
  allFiles: true,
  defaultSeverity: 'error',
  summary: 'The file is outside what signgate reads and signs: its PE, metadata, key blob or signature structures are not well formed.',
  hint: 'signgate checks and signs only files whose structures it reads whole (the runtime may still load this one): rebuild it with the standard compiler and tools, or leave it out of the upload',
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
