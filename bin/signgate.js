#!/usr/bin/env node
// The signgate command. The code lives in dist/ (built by `npm install` / `npm run build`).
import { main } from '../dist/cli/main.js';

// A closed pipe (`signgate inspect … | head`) is not an error of ours: stop quietly.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

process.exitCode = await main(process.argv.slice(2));
