// Validators for the project's published JSON Schemas (draft 2020-12) in schemas/.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { repoRoot } from './fixtures.js';

export function schemaValidator(file: string) {
  const schema = JSON.parse(readFileSync(join(repoRoot, 'schemas', file), 'utf8'));
  return new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true }).compile(schema);
}
