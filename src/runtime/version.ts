// The package version, read once from package.json (two levels up from both src/runtime and dist/runtime).
// A process helper that reads a file (test/architecture-fs.test.ts lists it): package.json lies outside src/, so it is
// no module to import, and scripts/build-sea.js inlines this very readFileSync(new URL(...)) in the one-file executable.
import { readFileSync } from 'node:fs';

export const VERSION: string = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
