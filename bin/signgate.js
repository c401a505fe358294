#!/usr/bin/env node
// The signgate command. The code lives in dist/ (built by `npm install` / `npm run build`), the command line
// bundled in dist/cli-bundle/.
import module from 'node:module';

// Node 22.1+ keeps compiled code between runs (a faster start); older Node versions start without it.
module.enableCompileCache?.();

// A closed pipe (`signgate inspect … | head`) is not an error of ours: stop quietly.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

if (process.argv.length === 3 && process.argv[2] === '--version') {
  // The one answer a build script asks for most: printed without loading the command line (yargs, chalk).
  const { VERSION } = await import('../dist/core/version.js');
  process.stdout.write(`${VERSION}\n`);
} else {
  // The bundled command line (scripts/bundle-cli.js): a few files instead of some 220 modules to resolve and compile.
  // After a lone `tsc` (no `npm run build`) the bundle is older than the modules: those run, never a stale bundle.
  const { statSync } = await import('node:fs');
  const bundle = new URL('../dist/cli-bundle/main.js', import.meta.url);
  const modules = new URL('../dist/cli/main.js', import.meta.url);
  let entry = bundle;
  try {
    if (statSync(bundle).mtimeMs < statSync(modules).mtimeMs) entry = modules;
  } catch {
    entry = modules;
  }
  const { main } = await import(entry.href);
  process.exitCode = await main(process.argv.slice(2));
}
