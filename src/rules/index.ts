// The ordered rule registry: every finding code, the check's rules (SG0xx-SG6xx, SG8xx) and the release audit's
// (SG7xx). Ids are never reused; a retired rule stays here as a comment.
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
import sg701 from './sg701-not-signed-for-release.js';
import sg702 from './sg702-manifest-missing-file.js';
import sg703 from './sg703-manifest-extra-file.js';
import sg704 from './sg704-signature-lost.js';
import sg705 from './sg705-vendor-attribute-lost.js';
import sg706 from './sg706-option-changed.js';
import sg707 from './sg707-authenticode-invalid.js';
import sg708 from './sg708-publisher-changed.js';
import sg709 from './sg709-not-in-signature-record.js';
import sg710 from './sg710-deps-file-missing.js';
import sg711 from './sg711-differs-from-package.js';
import sg712 from './sg712-deps-json-unreadable.js';
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

/** The release audit's findings, which only `signgate audit` makes (src/audit decides where each applies). */
export const auditRules = [sg701, sg702, sg703, sg704, sg705, sg706, sg707, sg708, sg709, sg710, sg711, sg712] as const;

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
