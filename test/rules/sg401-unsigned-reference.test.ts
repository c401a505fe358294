// SG401 unsigned-reference: a file to upload references an assembly without a public key token. With the folders
// the workflow listed (inputFolders), it also says when the library is not beside the file and where the build
// found it.
import rule from '../../src/rules/sg401-unsigned-reference.js';
import { ruleTable } from '../helpers/rule-table.js';

const API = 'fixtures/sdk/bin/wrong-turns/VendorCopied/Contoso.AddinApi.dll';
const FOLDER = 'fixtures/findings/unsigned-reference';
const ADDIN = `${FOLDER}/FindingAddin.dll`;
const FOUND = 'references UnsignedHelper, Version=1.0.0.0, which has no public key token';

ruleTable(rule, {
  valid: [
    { name: 'the add-in folder: every reference strong-named', paths: ['fixtures/addin'] },
    { name: 'the passing add-in', paths: ['fixtures/findings/passing'] },
    { name: 'the unsigned library itself needs no signing', paths: ['fixtures/findings/passing', `${FOLDER}/UnsignedHelper.dll`] },
    { name: 'the SDK net8.0 build', paths: ['fixtures/sdk/bin/net8.0', API] },
  ],
  invalid: [
    {
      name: 'the add-in references the unsigned helper beside it',
      paths: [FOLDER],
      reports: [
        {
          ruleId: 'SG401',
          severity: 'error',
          message: new RegExp(`^${FOUND}$`),
          file: ADDIN,
          hint: '--key your-key.snk --in-place',
          data: { reference: 'UnsignedHelper' },
        },
      ],
    },
    {
      name: 'the SDK build references UnsignedLib',
      paths: ['fixtures/sdk/bin/wrong-turns/UnsignedReference', API],
      reports: [
        {
          ruleId: 'SG401',
          severity: 'error',
          message: 'references UnsignedLib, Version=1.4.2.0, which has no public key token',
          file: 'fixtures/sdk/bin/wrong-turns/UnsignedReference/WrongTurn.UnsignedReference.dll',
          data: { reference: 'UnsignedLib' },
        },
      ],
    },
    {
      name: 'the listed folder holds the library: the plain finding',
      paths: [FOLDER],
      settings: { inputFolders: [{ folder: FOLDER, assemblies: ['findingaddin', 'unsignedhelper'], resolved: [] }] },
      reports: [{ ruleId: 'SG401', severity: 'error', message: new RegExp(`^${FOUND}$`), file: ADDIN }],
    },
    {
      name: 'the library is not in the listed folder, and no deps.json says where it came from',
      paths: [ADDIN],
      settings: { inputFolders: [{ folder: FOLDER, assemblies: ['findingaddin'], resolved: [] }] },
      reports: [
        {
          ruleId: 'SG401',
          severity: 'error',
          message: `${FOUND}, and UnsignedHelper.dll is not in ${FOLDER}: the project's assets (obj/project.assets.json in an SDK project) say where the build found it`,
          file: ADDIN,
          hint: 'signgate fix strong-names only the files it is given. Get UnsignedHelper.dll into',
          data: { reference: 'UnsignedHelper', missing: true },
        },
      ],
    },
    {
      name: 'the library is not in the listed folder; its deps.json names the NuGet package',
      paths: [ADDIN],
      settings: {
        inputFolders: [
          {
            folder: FOLDER,
            assemblies: ['findingaddin'],
            resolved: [
              {
                name: 'UnsignedHelper',
                depsFile: 'FindingAddin.deps.json',
                library: 'UnsignedHelper/1.0.0',
                type: 'package',
                asset: 'lib/net48/UnsignedHelper.dll',
              },
            ],
          },
        ],
      },
      reports: [
        {
          ruleId: 'SG401',
          severity: 'error',
          message: 'the build resolved it from the NuGet package UnsignedHelper 1.0.0 (lib/net48/UnsignedHelper.dll), as FindingAddin.deps.json says',
          file: ADDIN,
          hint: '<CopyLocalLockFileAssemblies>true</CopyLocalLockFileAssemblies>',
          data: { missing: true, resolvedFrom: 'UnsignedHelper/1.0.0' },
        },
      ],
    },
  ],
});
