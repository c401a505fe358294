// SG503 upload-too-large: the files to upload exceed the service's size limit; propose a split.
import { describeTooLarge, proposeSplit } from './split.js';
import { defineRule, inputSize } from './types.js';

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

export default defineRule({
  id: 'SG503',
  name: 'upload-too-large',
  scope: 'set',
  defaultSeverity: 'error',
  summary: "The files to upload exceed the signing service's size limit for one job (default 40 MB).",
  hint: 'Upload in several jobs: `signgate sign --split` does it, or upload the proposed groups one by one.',
  check: ({ upload, settings }) => {
    if (upload.totalBytes <= settings.maxUploadBytes) return [];
    const plan = proposeSplit(
      // A netmodule goes in the job of its assembly.
      upload.files.map((f) => ({
        path: f.input.path,
        uploadName: f.input.uploadName,
        size: inputSize(f.input),
        ...(f.role.kind === 'module' ? { unit: f.role.manifest } : {}),
      })),
      settings.maxUploadBytes,
    );
    const jobs = plan.jobs.map((job, i) => `job ${i + 1} (${mb(job.reduce((n, f) => n + f.size, 0))}): ${job.map((f) => f.path).join(', ')}`);
    const data = {
      totalBytes: upload.totalBytes,
      maxUploadBytes: settings.maxUploadBytes,
      jobs: plan.jobs.map((j) => j.map((f) => f.path)),
      tooLarge: plan.tooLarge.map((f) => f.path),
    };
    // A file larger than the limit on its own: no split helps, so none is advised.
    if (plan.tooLarge.length) {
      const { message, hint } = describeTooLarge(plan.tooLarge, settings.maxUploadBytes);
      return [{ message: `${message}${plan.jobs.length ? `; the other files would fit in ${plan.jobs.length} job(s)` : ''}`, hint, data }];
    }
    return [
      {
        message: `the upload is ${mb(upload.totalBytes)} in ${upload.files.length} files, over the limit of ${mb(settings.maxUploadBytes)}; proposed split: ${jobs.join('; ')}`,
        data,
      },
    ];
  },
});
