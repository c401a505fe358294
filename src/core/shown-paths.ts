// The folder of a path as the commands show it (`/`-separated, relative to the working folder or absolute), for
// messages and for the commands they suggest.

/** The folder of a shown path (`/`-separated), `.` for a bare file name. */
export function shownFolder(shownPath: string): string {
  const slash = shownPath.lastIndexOf('/');
  return slash < 0 ? '.' : slash === 0 ? '/' : shownPath.slice(0, slash);
}

/** The folder of a shown path (`/`-separated), quoted for a shell when it needs to be. */
export function folderArgument(shownPath: string): string {
  const folder = shownFolder(shownPath);
  return /^[\w./:\\-]+$/.test(folder) ? folder : `"${folder}"`;
}
