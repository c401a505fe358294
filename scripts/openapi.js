// Writes schemas/openapi.json from the service's route schemas (`npm run openapi`); a test keeps it current.
import { mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildServer } from '../dist/server/http/app.js';
import { parseServerConfig } from '../dist/server/server-config.js';

const config = parseServerConfig({ vendor: 'Contoso', organizations: [] }, process.cwd());
const app = await buildServer({ config, dataDir: mkdtempSync(join(tmpdir(), 'signgate-openapi-')) });
const target = new URL('../schemas/openapi.json', import.meta.url).pathname;
writeFileSync(`${target}.tmp`, `${JSON.stringify(app.swagger(), null, 2)}\n`);
renameSync(`${target}.tmp`, target);
await app.close();
console.log(`wrote ${target}`);
