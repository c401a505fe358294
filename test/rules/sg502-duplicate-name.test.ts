// SG502 duplicate-name: two files of the upload under one name at the same folder level (compared as Windows does).
// The folder trees are made for the test from the real add-in.
import { join } from 'node:path';
import rule from '../../src/rules/sg502-duplicate-name.js';
import { fixture, scratchFolder } from '../helpers/fixtures.js';
import { ruleTable } from '../helpers/rule-table.js';

const ADDIN = fixture('findings/passing/FindingAddin.dll');
const LIBRARY = fixture('addin/ThirdParty.Json.dll');

/** A folder holding `files` (path in it -> bytes). */
function tree(files: Record<string, Uint8Array>): string {
  const { dir, save } = scratchFolder('signgate-sg502-');
  for (const [name, bytes] of Object.entries(files)) save(name, bytes);
  return dir;
}

const twoFolders = tree({ 'a/FindingAddin.dll': ADDIN, 'b/findingaddin.DLL': ADDIN });
const sameLevel = tree({ 'Sub/FindingAddin.dll': ADDIN, 'sub/FINDINGADDIN.dll': ADDIN });
const three = tree({ 'x/FindingAddin.dll': ADDIN, 'y/FindingAddin.dll': ADDIN, 'z/FindingAddin.dll': ADDIN });
const libraries = tree({ 'FindingAddin.dll': ADDIN, 'a/ThirdParty.Json.dll': LIBRARY, 'b/ThirdParty.Json.dll': LIBRARY });

ruleTable(rule, {
  valid: [
    { name: 'the add-in folder: every upload name once', paths: ['fixtures/addin'] },
    { name: 'with --root, the same name in two folders keeps their relative paths', paths: [twoFolders], settings: { root: twoFolders } },
    { name: 'the same name twice among files that are not uploaded', paths: [libraries] },
    { name: 'the same file named twice is one input', paths: ['fixtures/findings/passing/FindingAddin.dll', 'fixtures/findings/passing'] },
  ],
  invalid: [
    {
      name: 'without --root, the same name in two folders (case ignored)',
      paths: [twoFolders],
      reports: [
        {
          ruleId: 'SG502',
          severity: 'error',
          message: `2 files would be uploaded as "FindingAddin.dll": ${join(twoFolders, 'a/FindingAddin.dll')}, ${join(twoFolders, 'b/findingaddin.DLL')}`,
          file: join(twoFolders, 'b/findingaddin.DLL'),
          hint: 'Pass --root <folder>',
          data: { files: [join(twoFolders, 'a/FindingAddin.dll'), join(twoFolders, 'b/findingaddin.DLL')] },
        },
      ],
    },
    {
      name: 'with --root, folder and file names that differ only in case at the same level',
      paths: [sameLevel],
      settings: { root: sameLevel },
      reports: [
        {
          ruleId: 'SG502',
          severity: 'error',
          message: '2 files would be uploaded as "Sub/FindingAddin.dll"',
          file: join(sameLevel, 'sub/FINDINGADDIN.dll'),
          hint: 'Upload them in separate jobs, or pass --root',
        },
      ],
    },
    {
      name: 'three files under one name: one finding naming all three',
      paths: [three],
      reports: [
        {
          ruleId: 'SG502',
          severity: 'error',
          message: `3 files would be uploaded as "FindingAddin.dll": ${['x', 'y', 'z'].map((d) => join(three, d, 'FindingAddin.dll')).join(', ')}`,
          file: join(three, 'y/FindingAddin.dll'),
        },
      ],
    },
  ],
});
