// The ordered rule registry. Ids are never reused; a retired rule stays here as a comment.
import sg001 from './sg001-malformed.js';
import sg002 from './sg002-not-managed.js';
import sg201 from './sg201-not-delay-signed.js';
import sg202 from './sg202-public-signed.js';
import sg203 from './sg203-already-signed.js';
import sg204 from './sg204-invalid-signature.js';
import sg205 from './sg205-wrong-key.js';
import sg206 from './sg206-signature-slot-size.js';
import sg207 from './sg207-netmodule-mismatch.js';
import sg208 from './sg208-authenticode-before-strong-name.js';
import sg301 from './sg301-missing-vendor-attribute.js';
import sg302 from './sg302-vendor-attribute-false.js';
import sg303 from './sg303-vendor-attribute-wrong-type.js';
import sg304 from './sg304-vendor-attribute-look-alike.js';
import sg401 from './sg401-unsigned-reference.js';
import sg501 from './sg501-vendor-assembly-included.js';
import sg502 from './sg502-duplicate-name.js';
import sg503 from './sg503-upload-too-large.js';
import sg504 from './sg504-nothing-to-sign.js';
import sg505 from './sg505-reserved-device-name.js';
import sg601 from './sg601-option-not-licensed.js';
import sg602 from './sg602-no-license.js';
import sg801 from './sg801-loads-under-no-license.js';
import sg802 from './sg802-refused-by-net-framework.js';
import type { Rule } from './types.js';

export const rules = [
  sg001,
  sg002,
  sg201,
  sg202,
  sg203,
  sg204,
  sg205,
  sg206,
  sg207,
  sg208,
  sg301,
  sg302,
  sg303,
  sg304,
  sg401,
  sg501,
  sg502,
  sg503,
  sg504,
  sg505,
  sg601,
  sg602,
  sg801,
  sg802,
] as const;

/** Where the rule pages live; every link is derived from the id here, never typed by hand. */
export const RULES_DOCS_URL = 'https://github.com/signgate/signgate/blob/main/docs/rules.md';

export function ruleDocsUrl(id: string): string {
  return `${RULES_DOCS_URL}#${id.toLowerCase()}`;
}

/** A rule by id (SG301) or name (missing-vendor-attribute), case-insensitive. */
export function findRule(idOrName: string): Rule | undefined {
  const key = idOrName.toLowerCase();
  return (rules as readonly Rule[]).find((r) => r.id.toLowerCase() === key || r.name === key);
}
