// A job's folder as every backend keeps it and every layer names its files: each name spelled once here. The
// uploads as they came, the result package, and for the archive path its manifest, the files that are no
// assemblies and the result archive. The signing log inside a package is core/upload-names.ts's SIGNING_LOG (the
// client reads it too).
/** The uploaded files, at their paths as uploaded. */
export const UPLOADS_FOLDER = 'uploads';
/** The result package's name in a job's folder unless the job names another (JobRecord.resultFile). */
export const DEFAULT_RESULT_FILE = 'result.zip';
/** What an uploaded archive held, in its order: written beside the job, read when the result archive is built. */
export const ARCHIVE_MANIFEST = 'archive.json';
/** The files of an uploaded archive that are not assemblies, kept as they came. */
export const ARCHIVE_FILES = 'archive-files';
/** The result archive of the archive path. */
export const ARCHIVE_RESULT = 'archive-result.zip';
