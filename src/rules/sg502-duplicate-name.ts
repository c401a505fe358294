// SG502 duplicate-name: two uploaded files with the same name at the same folder level (compared as Windows does).
import { windowsPathKey } from '../core/windows-names.js';
import { defineRule } from './types.js';

export default defineRule({
  id: 'SG502',
  name: 'duplicate-name',
  scope: 'set',
  defaultSeverity: 'error',
  summary: 'Two files of the upload have the same name at the same folder level (case-insensitive, as on Windows); the service refuses the upload.',
  hint: 'Upload them in separate jobs, or pass --root so that their relative folders tell them apart.',
  check: ({ upload, settings }) => {
    const groups = new Map<string, string[]>();
    for (const f of upload.files) {
      const key = windowsPathKey(f.input.uploadName);
      groups.set(key, [...(groups.get(key) ?? []), f.input.path]);
    }
    return [...groups.values()]
      .filter((paths) => paths.length > 1)
      .map((paths) => ({
        message: `${paths.length} files would be uploaded as ${JSON.stringify(upload.files.find((f) => f.input.path === paths[0])!.input.uploadName)}: ${paths.join(', ')}`,
        ...(settings.root === null
          ? { hint: 'Pass --root <folder> so that files in different folders keep their relative paths, or upload them in separate jobs.' }
          : {}),
        file: paths[1]!,
        data: { files: paths },
      }));
  },
});
