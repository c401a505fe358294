// Validators for the project's published JSON Schemas (draft 2020-12) in schemas/.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { repoRoot } from './fixtures.js';

/** A validator of schemas/`file`; a `$ref` to another of the project's schemas (by its `$id`) is resolved. */
export function schemaValidator(file: string) {
  const read = (name: string) => JSON.parse(readFileSync(join(repoRoot, 'schemas', name), 'utf8'));
  const schema = read(file);
  const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
  const text = JSON.stringify(schema);
  for (const other of readdirSync(join(repoRoot, 'schemas')).filter((n) => n.endsWith('.schema.json') && n !== file)) {
    const loaded = read(other);
    if (typeof loaded.$id === 'string' && text.includes(`"${loaded.$id}`)) ajv.addSchema(loaded);
  }
  return ajv.compile(schema);
}
