// SG207 netmodule-mismatch: a netmodule the manifest's File table lists is missing from the inputs, or its bytes
// do not match the hash recorded for it (ECMA-335 II.22.19; the hash uses the Assembly row's HashAlgId).
import { toHex } from '../binary/byte-cursor.js';
import { TableId } from '../metadata/schema.js';
import { computeFileHash, findFileHashAlgorithm } from '../strongname/file-hash.js';
import { defineRule, type RuleReport } from './types.js';

export default defineRule({
  id: 'SG207',
  name: 'netmodule-mismatch',
  scope: 'file',
  defaultSeverity: 'error',
  summary: "A netmodule listed in the assembly's File table is not among the inputs, or its bytes do not match the hash the manifest records for it.",
  hint: 'Link the assembly again (al, or the compiler with -addmodule) after the last build of its netmodules, and check the folder that holds them all.',
  check: ({ facts, all }) => {
    const module = facts.module;
    const assembly = module?.assembly;
    if (!module || !assembly) return [];
    const reports: RuleReport[] = [];
    for (const link of facts.netmodules) {
      const { row } = link;
      const location = { fileOffset: module.tables.rowFileOffset(TableId.File, row.rid) };
      if (link.path === undefined) {
        reports.push({
          message: `${row.name}, listed in the File table (row ${row.rid}), is not among the inputs; the assembly cannot load without it`,
          hint: `Check the folder that holds ${facts.input.path.split('/').pop()} and ${row.name}, or name ${row.name} too; it is uploaded with the assembly.`,
          location,
          data: { netmodule: row.name, cause: 'missing' },
        });
        continue;
      }
      const algorithm = findFileHashAlgorithm(assembly.hashAlgId);
      if (!algorithm) {
        reports.push({
          message: `the Assembly row's HashAlgId 0x${assembly.hashAlgId.toString(16)} is not a known hash algorithm, so the hash of ${row.name} cannot be checked`,
          hint: 'Link the assembly with a standard hash algorithm (al /algid: SHA-1 is the default).',
          location,
          data: { netmodule: row.name, cause: 'unknown-algorithm', hashAlgId: assembly.hashAlgId },
        });
        continue;
      }
      const bytes = all.get(link.path)?.input.bytes;
      if (!bytes) continue;
      const actual = toHex(computeFileHash(bytes, algorithm));
      const recorded = toHex(row.hashValue);
      if (actual === recorded) continue;
      reports.push({
        message: `${link.path} does not match the ${algorithm.toUpperCase()} hash File row ${row.rid} records for ${row.name} (recorded ${recorded || 'nothing'}, the file has ${actual}); it was changed or rebuilt after the assembly was linked`,
        location,
        data: { netmodule: row.name, path: link.path, cause: 'hash-mismatch', algorithm, recorded, actual },
      });
    }
    return reports;
  },
});
