// Removes dist/ before a build, so that modules moved or deleted in src/ do not linger in the package.
import { rmSync } from 'node:fs';

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
