// SG503 upload-too-large: the files to upload exceed the service's limit for one job; a split is proposed, or
// the file too large on its own is named. Limits are set from the fixtures' own sizes.
import { statSync } from 'node:fs';
import rule from '../../src/rules/sg503-upload-too-large.js';
import { fixture, fixturePath, scratchFolder } from '../helpers/fixtures.js';
import { ruleTable } from '../helpers/rule-table.js';

const ADDIN = 'fixtures/findings/passing/FindingAddin.dll';
const size = statSync(fixturePath('findings/passing/FindingAddin.dll')).size;
const sampleSize = statSync(fixturePath('addin/SampleAddin.dll')).size;
const { dir, save } = scratchFolder('signgate-sg503-');
save('A/FindingAddin.dll', fixture('findings/passing/FindingAddin.dll'));
save('B/FindingAddin.dll', fixture('findings/passing/FindingAddin.dll'));
save('SampleAddin.dll', fixture('addin/SampleAddin.dll'));
const total = 2 * size + sampleSize;
const MODULES = 'fixtures/modules/passing';
const manifestSize = statSync(fixturePath('modules/passing/ModuleAddin.dll')).size;
const moduleSize = statSync(fixturePath('modules/passing/AddinCode.netmodule')).size;
const moduleTotal = manifestSize + moduleSize;
const MB = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

ruleTable(rule, {
  valid: [
    { name: 'the add-in folder under the default 40 MB', paths: ['fixtures/addin'] },
    { name: 'an upload exactly at the limit', paths: [ADDIN], settings: { maxUploadBytes: size } },
    { name: 'three files exactly at the limit', paths: [dir], settings: { root: dir, maxUploadBytes: total } },
    { name: 'an assembly and its netmodule exactly at the limit', paths: [MODULES], settings: { maxUploadBytes: moduleTotal } },
    { name: 'files that are not uploaded do not count', paths: [ADDIN, 'fixtures/addin/ThirdParty.Json.dll'], settings: { maxUploadBytes: size } },
  ],
  invalid: [
    {
      name: 'one byte over the limit with one file: no split can upload it',
      paths: [ADDIN],
      settings: { maxUploadBytes: size - 1 },
      reports: [
        {
          ruleId: 'SG503',
          severity: 'error',
          message: `${ADDIN} (${MB(size)}, ${size} bytes) is larger on its own than the upload limit of ${MB(size - 1)} (${size - 1} bytes): no split can upload it`,
          file: null,
          hint: 'Make the assembly smaller',
          data: { totalBytes: size, maxUploadBytes: size - 1, tooLarge: [ADDIN] },
        },
      ],
    },
    {
      name: 'three files over the limit, each fits: a split into jobs',
      paths: [dir],
      settings: { root: dir, maxUploadBytes: total - 1 },
      reports: [
        {
          ruleId: 'SG503',
          severity: 'error',
          message: new RegExp(`^the upload is ${MB(total).replace('.', '\\.')} in 3 files, over the limit of .*; proposed split: job 1 \\(.*\\): .*; job 2 `),
          file: null,
          hint: 'signgate sign --split',
          data: { totalBytes: total, maxUploadBytes: total - 1, tooLarge: [] },
        },
      ],
    },
    {
      name: 'one file too large on its own, the others fit',
      paths: [dir],
      settings: { root: dir, maxUploadBytes: Math.max(size, sampleSize) - 1 },
      reports: [
        {
          ruleId: 'SG503',
          severity: 'error',
          message: /larger on (its|their) own than the upload limit .*; the other files would fit in \d job\(s\)$/,
          file: null,
        },
      ],
    },
    {
      name: 'a netmodule goes in the job of its assembly: together over the limit, both are named',
      paths: [MODULES],
      settings: { maxUploadBytes: moduleTotal - 1 },
      reports: [
        {
          ruleId: 'SG503',
          severity: 'error',
          message: `${MODULES}/AddinCode.netmodule (${MB(moduleSize)}, ${moduleSize} bytes), ${MODULES}/ModuleAddin.dll (${MB(manifestSize)}, ${manifestSize} bytes) are each larger on their own than the upload limit`,
          file: null,
          data: { totalBytes: moduleTotal, jobs: [], tooLarge: [`${MODULES}/AddinCode.netmodule`, `${MODULES}/ModuleAddin.dll`] },
        },
      ],
    },
  ],
});
