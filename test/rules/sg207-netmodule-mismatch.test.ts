// SG207 netmodule-mismatch: a netmodule the manifest's File table lists is not among the inputs, or its bytes do
// not match the hash recorded for it.
import rule from '../../src/rules/sg207-netmodule-mismatch.js';
import { ruleTable } from '../helpers/rule-table.js';

const M = 'fixtures/modules';

ruleTable(rule, {
  valid: [
    { name: 'the assembly and its netmodule, found in their folder', paths: [`${M}/passing`] },
    { name: 'the assembly and its netmodule, both named', paths: [`${M}/passing/ModuleAddin.dll`, `${M}/passing/AddinCode.netmodule`] },
    { name: 'the al-linked assembly with part.netmodule beside it', paths: ['fixtures/assemblies'] },
    { name: 'single-module add-ins list no netmodule', paths: ['fixtures/addin'] },
    { name: "the attribute only in the netmodule is SG301's, the hash matches", paths: [`${M}/attribute-in-module`] },
  ],
  invalid: [
    {
      name: 'the netmodule changed after linking',
      paths: [`${M}/changed-module`],
      reports: [
        {
          ruleId: 'SG207',
          severity: 'error',
          message:
            /^fixtures\/modules\/changed-module\/AddinCode\.netmodule does not match the SHA1 hash File row 1 records for AddinCode\.netmodule \(recorded [0-9a-f]{40}, the file has [0-9a-f]{40}\)/,
          file: `${M}/changed-module/ModuleAddin.dll`,
          data: { cause: 'hash-mismatch', algorithm: 'sha1', netmodule: 'AddinCode.netmodule' },
        },
      ],
    },
    {
      name: 'the assembly named without its netmodule',
      paths: [`${M}/passing/ModuleAddin.dll`],
      reports: [
        {
          ruleId: 'SG207',
          severity: 'error',
          message: 'AddinCode.netmodule, listed in the File table (row 1), is not among the inputs; the assembly cannot load without it',
          file: `${M}/passing/ModuleAddin.dll`,
          hint: 'name AddinCode.netmodule too',
          data: { cause: 'missing', netmodule: 'AddinCode.netmodule' },
        },
      ],
    },
    {
      name: 'the al-linked assembly named without part.netmodule',
      paths: ['fixtures/findings/passing', 'fixtures/assemblies/al-delay.dll'],
      reports: [
        {
          ruleId: 'SG207',
          severity: 'error',
          message: 'part.netmodule, listed in the File table (row 1), is not among the inputs',
          file: 'fixtures/assemblies/al-delay.dll',
        },
      ],
    },
    {
      name: "another assembly's netmodule of the same name does not stand in for it",
      paths: [`${M}/changed-module/ModuleAddin.dll`, `${M}/passing/AddinCode.netmodule`],
      reports: [
        {
          ruleId: 'SG207',
          severity: 'error',
          message: 'AddinCode.netmodule, listed in the File table (row 1), is not among the inputs',
          file: `${M}/changed-module/ModuleAddin.dll`,
        },
      ],
    },
  ],
});
