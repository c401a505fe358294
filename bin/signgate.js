#!/usr/bin/env node
// The signgate command. The code lives in dist/ (built by `npm install` / `npm run build`).
import { main } from '../dist/cli/main.js';

process.exitCode = await main(process.argv.slice(2));
