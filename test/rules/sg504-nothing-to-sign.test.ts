// SG504 nothing-to-sign: no input uses the vendor API, so a passing check would approve nothing; the finding names
// the likely cause (no inputs, no readable assembly, the vendor's own only, a mistyped vendor name). In a build, one
// project that references no vendor API is a note.
import rule from '../../src/rules/sg504-nothing-to-sign.js';
import { fixture, scratchFolder } from '../helpers/fixtures.js';
import { ruleTable } from '../helpers/rule-table.js';

const empty = scratchFolder('signgate-sg504-empty-').dir;
const textOnly = scratchFolder('signgate-sg504-text-');
textOnly.save('readme.txt', new TextEncoder().encode('not an assembly\n'));
const LIBRARY = 'fixtures/addin/ThirdParty.Json.dll';
const contosso = { vendor: 'Contosso', vendorApi: ['Contosso.*'], vendorNamespace: 'Contosso' };

ruleTable(rule, {
  valid: [
    { name: 'the add-in folder', paths: ['fixtures/addin'] },
    { name: 'an add-in already signed with the organization key still counts', paths: ['fixtures/findings/already-signed'] },
    { name: 'an add-in whose attribute is missing (SG301) still uses the vendor API', paths: ['fixtures/findings/missing-vendor-attribute'] },
    { name: 'a multi-module assembly that uses the vendor API in its netmodule', paths: ['fixtures/modules/passing'] },
    {
      name: 'the vendor name typed in another case',
      paths: ['fixtures/addin'],
      settings: { vendor: 'contoso', vendorApi: ['contoso.*'], vendorNamespace: 'contoso' },
    },
  ],
  invalid: [
    {
      name: 'an empty folder',
      paths: [empty],
      reports: [
        { ruleId: 'SG504', severity: 'error', message: 'nothing to sign: the inputs hold no .dll or .exe file', file: null, data: { cause: 'no-inputs' } },
      ],
    },
    {
      name: 'a folder with only a text file',
      paths: [textOnly.dir],
      reports: [{ ruleId: 'SG504', severity: 'error', message: 'the inputs hold no .dll or .exe file', file: null, data: { cause: 'no-inputs' } }],
    },
    {
      name: 'only files that are no readable assemblies: unreadable, native, netmodule',
      paths: ['fixtures/corrupt/zero-byte.dll', 'fixtures/variants/native.dll', 'fixtures/assemblies/part.netmodule'],
      reports: [
        {
          ruleId: 'SG504',
          severity: 'error',
          message: 'nothing to sign: none of the 3 input files is a .NET assembly signgate can read (1 refused (SG001), 2 native code or netmodules)',
          file: null,
          data: { cause: 'no-assemblies', files: 3, unreadable: 1 },
        },
      ],
    },
    {
      name: "only the vendor's own assemblies",
      paths: ['fixtures/vendor'],
      reports: [
        {
          ruleId: 'SG504',
          severity: 'error',
          message: "nothing to sign: the only assemblies are the vendor's own (Contoso.AddinApi, Contoso.Core)",
          file: null,
        },
      ],
    },
    {
      name: 'a mistyped vendor name: the near misses and the suggestion',
      paths: ['fixtures/addin'],
      settings: contosso,
      reports: [
        {
          ruleId: 'SG504',
          severity: 'error',
          message: 'none of the 8 assemblies references a vendor API assembly (Contosso.*); close to the vendor name: Contoso.AddinApi, Contoso.Core',
          file: null,
          hint: 'Did you mean --vendor Contoso?',
          data: { cause: 'no-vendor-reference', suggestedVendors: ['Contoso'] },
        },
      ],
    },
    {
      name: 'one library that uses no vendor API: the finding names it',
      paths: [LIBRARY],
      reports: [
        {
          ruleId: 'SG504',
          severity: 'error',
          message: 'nothing to sign: the one assembly does not reference a vendor API assembly (Contoso.*)',
          file: LIBRARY,
          hint: 'Check --vendor and --vendor-api',
        },
      ],
    },
    {
      name: 'in a build, a helper project that uses no vendor API: a note',
      paths: [LIBRARY],
      settings: { inBuild: true },
      reports: [
        {
          ruleId: 'SG504',
          severity: 'note',
          message: 'needs no signing: the one assembly does not reference a vendor API assembly',
          file: LIBRARY,
          data: { inBuild: true },
        },
      ],
    },
    {
      name: 'a helper delay-signed with the option key alone approves nothing',
      paths: ['fixtures/assemblies/delay-1024.dll'],
      reports: [
        { ruleId: 'SG504', severity: 'error', message: 'nothing to sign: the one assembly does not reference', file: 'fixtures/assemblies/delay-1024.dll' },
      ],
    },
    {
      name: 'inputs given as bytes: a library copy',
      inputs: [{ path: 'bin/ThirdParty.Json.dll', uploadName: 'ThirdParty.Json.dll', bytes: fixture('addin/ThirdParty.Json.dll'), explicit: true }],
      reports: [{ ruleId: 'SG504', severity: 'error', message: 'nothing to sign', file: 'bin/ThirdParty.Json.dll' }],
    },
  ],
});
