// SG002 not-managed: a netmodule named for upload that no named assembly lists. Native code, netmodules found in a
// folder and a netmodule named beside its assembly are not findings.
import rule from '../../src/rules/sg002-not-managed.js';
import { ruleTable } from '../helpers/rule-table.js';

const NETMODULE = 'fixtures/sdk/bin/wrong-turns/Netmodule/WrongTurn.Netmodule.netmodule';

ruleTable(rule, {
  valid: [
    { name: 'the passing add-in folder', paths: ['fixtures/addin'] },
    { name: 'native code named explicitly: not required, no finding', paths: ['fixtures/findings/passing', 'fixtures/variants/native.dll'] },
    { name: 'a netmodule found in a folder (not named): not required', paths: ['fixtures/sdk/bin/wrong-turns/Netmodule'] },
    {
      name: 'a netmodule named beside the assembly that lists it belongs to that assembly',
      paths: ['fixtures/modules/passing/ModuleAddin.dll', 'fixtures/modules/passing/AddinCode.netmodule'],
    },
    { name: 'al-linked assembly and its netmodule found together', paths: ['fixtures/assemblies'] },
    { name: 'an unreadable file named explicitly is SG001, not SG002', paths: ['fixtures/corrupt/zero-byte.dll'] },
  ],
  invalid: [
    {
      name: 'part.netmodule named explicitly beside an add-in that does not list it',
      paths: ['fixtures/findings/passing', 'fixtures/assemblies/part.netmodule'],
      reports: [
        {
          ruleId: 'SG002',
          severity: 'error',
          message: 'the file is a netmodule (part.netmodule) without an assembly manifest',
          file: 'fixtures/assemblies/part.netmodule',
          hint: 'Upload the assembly that lists the netmodule',
        },
      ],
    },
    {
      name: 'the SDK-built netmodule named alone',
      paths: [NETMODULE],
      reports: [
        {
          ruleId: 'SG002',
          severity: 'error',
          message: 'the file is a netmodule (WrongTurn.Netmodule.netmodule) without an assembly manifest',
          file: NETMODULE,
        },
      ],
    },
    {
      name: 'a netmodule named without its assembly, whose assembly is in no input',
      paths: ['fixtures/modules/passing/AddinCode.netmodule'],
      reports: [
        {
          ruleId: 'SG002',
          severity: 'error',
          message: 'the file is a netmodule (AddinCode.netmodule) without an assembly manifest',
          file: 'fixtures/modules/passing/AddinCode.netmodule',
        },
      ],
    },
  ],
});
