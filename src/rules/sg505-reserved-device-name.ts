// SG505 reserved-device-name: an upload name (or one of its folders) is a Windows device name such as CON.dll.
import { windowsDeviceName } from '../core/windows-names.js';
import { defineRule } from './types.js';

export default defineRule({
  id: 'SG505',
  name: 'reserved-device-name',
  scope: 'set',
  defaultSeverity: 'error',
  summary:
    'A file of the upload, or a folder in its name, is a reserved Windows device name (CON, PRN, AUX, NUL, COM1-COM9, LPT1-LPT9, with any extension); it cannot be written on the service or on a customer machine.',
  hint: 'Rename the file (or folder) in the project, for example CON.dll to ConsoleHelper.dll.',
  check: ({ upload }) =>
    upload.files.flatMap((f) => {
      const segments = f.input.uploadName.split(/[\\/]/);
      const at = segments.findIndex((s) => windowsDeviceName(s) !== undefined);
      if (at < 0) return [];
      const device = windowsDeviceName(segments[at]!)!;
      const what = at === segments.length - 1 ? 'the file name' : `the folder ${JSON.stringify(segments[at])}`;
      return [
        {
          message: `${f.input.uploadName}: ${what} is the Windows device name ${device}; Windows opens the device, not a file, whatever the case or extension`,
          file: f.input.path,
          data: { uploadName: f.input.uploadName, device },
        },
      ];
    }),
});
