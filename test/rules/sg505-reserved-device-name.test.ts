// SG505 reserved-device-name: an upload name, or a folder in it, is a Windows device name (CON, AUX, COM1, ...).
import { join } from 'node:path';
import rule from '../../src/rules/sg505-reserved-device-name.js';
import { fixture, scratchFolder } from '../helpers/fixtures.js';
import { ruleTable } from '../helpers/rule-table.js';

const ADDIN = fixture('findings/passing/FindingAddin.dll');
const con = scratchFolder('signgate-sg505-con-');
con.save('CON.dll', ADDIN);
const folder = scratchFolder('signgate-sg505-aux-');
folder.save('aux/FindingAddin.dll', ADDIN);
const lower = scratchFolder('signgate-sg505-com1-');
lower.save('com1.Addin.dll', ADDIN);
const near = scratchFolder('signgate-sg505-near-');
for (const name of ['CONSOLE.dll', 'COM10.dll', 'NULL.dll', 'xCON.dll']) near.save(name, ADDIN);
const library = scratchFolder('signgate-sg505-library-');
library.save('FindingAddin.dll', ADDIN);
library.save('NUL.dll', fixture('addin/ThirdParty.Json.dll'));

ruleTable(rule, {
  valid: [
    { name: 'the add-in folder', paths: ['fixtures/addin'] },
    { name: 'names that only look like devices: CONSOLE, COM10, NULL, xCON', paths: [near.dir] },
    { name: 'a device name on a file that is not uploaded', paths: [library.dir] },
    { name: 'a device-named folder without --root: upload names are bare file names', paths: [folder.dir] },
  ],
  invalid: [
    {
      name: 'the add-in uploaded as CON.dll',
      paths: [con.dir],
      reports: [
        {
          ruleId: 'SG505',
          severity: 'error',
          message: 'CON.dll: the file name is the Windows device name CON; Windows opens the device, not a file',
          file: join(con.dir, 'CON.dll'),
          data: { uploadName: 'CON.dll', device: 'CON' },
        },
      ],
    },
    {
      name: 'with --root, a folder aux/ in the upload name',
      paths: [folder.dir],
      settings: { root: folder.dir },
      reports: [
        {
          ruleId: 'SG505',
          severity: 'error',
          message: 'aux/FindingAddin.dll: the folder "aux" is the Windows device name AUX',
          file: join(folder.dir, 'aux/FindingAddin.dll'),
        },
      ],
    },
    {
      name: 'any case and any extension: com1.Addin.dll',
      paths: [lower.dir],
      reports: [
        {
          ruleId: 'SG505',
          severity: 'error',
          message: 'com1.Addin.dll: the file name is the Windows device name COM1',
          file: join(lower.dir, 'com1.Addin.dll'),
        },
      ],
    },
  ],
});
