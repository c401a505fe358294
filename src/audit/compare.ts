// Comparing releases: what changed in each file between the previous audit and this one, and whether a stored
// report still says what its files say now (audit verify).
import { windowsPathKey } from '../core/windows-names.js';
import type { Finding } from '../core/diagnostic.js';
import type { AuditAspectChange, AuditChanges, AuditFile, AuditFileChange, AuditReport } from './model.js';

type Evidence = Pick<AuditFile, 'name' | 'sha256' | 'assembly' | 'vendorAttribute' | 'authenticode'> & {
  readonly strongName: Pick<NonNullable<AuditFile['strongName']>, 'state' | 'signedWithExpectedKey' | 'optionId'> | null;
  readonly verdict?: string;
};

const identityOf = (x: Evidence) => (x.assembly ? `${x.assembly.name}, Version=${x.assembly.version}, Culture=${x.assembly.culture || 'neutral'}` : null);
const signedForRelease = (x: Evidence) => x.strongName?.signedWithExpectedKey === true;
/** The publisher of a valid Authenticode signature, null without one; undefined when the report predates Authenticode. */
const publisherOf = (x: Evidence) => (x.authenticode === undefined ? undefined : x.authenticode?.state === 'valid' ? x.authenticode.publisher : null);

/**
 * What changed between two releases, matching files by their name relative to the release root (case-insensitive).
 * Each file in both releases is compared aspect by aspect (strong-name state, key, identity, vendor attribute,
 * option, bytes); "re-signed" is only signed before and after with the same key and identity and new bytes.
 * The previous report may be of format 1 (it has every field compared here but the verdict).
 */
export function compareAudits(previous: { readonly files: readonly Evidence[] }, current: readonly Evidence[]): AuditChanges {
  const key = nameKey(
    previous.files.map((f) => f.name),
    current.map((f) => f.name),
  );
  const before = new Map(previous.files.map((f) => [key(f.name), f]));
  const now = new Map(current.map((f) => [key(f.name), f]));
  const added = current.filter((f) => !before.has(key(f.name))).map((f) => f.name);
  const removed = previous.files.filter((f) => !now.has(key(f.name))).map((f) => f.name);
  const lists = {
    resigned: [] as string[],
    signatureLost: [] as string[],
    newlySigned: [] as string[],
    keyChanged: [] as string[],
    identityChanged: [] as string[],
    vendorAttributeChanged: [] as string[],
    optionChanged: [] as string[],
    publisherChanged: [] as string[],
  };
  const files: AuditFileChange[] = [];
  for (const f of current) {
    const old = before.get(key(f.name));
    if (!old) continue;
    const aspects: AuditAspectChange[] = [];
    const note = (aspect: AuditAspectChange['aspect'], a: string | null, b: string | null) => a !== b && aspects.push({ aspect, before: a, after: b });
    note('strong-name', old.strongName?.state ?? null, f.strongName?.state ?? null);
    note('key', old.assembly?.publicKeyToken ?? null, f.assembly?.publicKeyToken ?? null);
    note('identity', identityOf(old), identityOf(f));
    note('vendor-attribute', old.vendorAttribute, f.vendorAttribute);
    note('option', old.strongName?.optionId?.toString() ?? null, f.strongName?.optionId?.toString() ?? null);
    note('bytes', old.sha256, f.sha256);
    const [publisherBefore, publisherNow] = [publisherOf(old), publisherOf(f)];
    if (publisherBefore !== undefined && publisherNow !== undefined) note('publisher', publisherBefore, publisherNow);
    if (aspects.length === 0) continue;
    const has = (a: AuditAspectChange['aspect']) => aspects.some((x) => x.aspect === a);
    const lost = signedForRelease(old) && !signedForRelease(f);
    const gained = !signedForRelease(old) && signedForRelease(f);
    const vendorLost = old.vendorAttribute === 'present' && f.vendorAttribute !== 'present' && f.vendorAttribute !== 'not-required';
    if (lost) lists.signatureLost.push(f.name);
    if (gained) lists.newlySigned.push(f.name);
    if (has('key')) lists.keyChanged.push(f.name);
    if (has('identity')) lists.identityChanged.push(f.name);
    if (has('vendor-attribute')) lists.vendorAttributeChanged.push(f.name);
    if (has('option') && old.strongName?.optionId != null && f.strongName?.optionId != null) lists.optionChanged.push(f.name);
    if (has('publisher') && publisherBefore !== null) lists.publisherChanged.push(f.name);
    const resigned =
      signedForRelease(old) && signedForRelease(f) && aspects.every((a) => a.aspect === 'bytes' || (a.aspect === 'publisher' && a.before === null));
    if (resigned) lists.resigned.push(f.name);
    const words: string[] = [];
    if (lost) words.push(`lost its signature: ${old.strongName?.state ?? 'unreadable'} → ${f.strongName?.state ?? 'unreadable'}`);
    else if (gained) words.push(`now signed for release: ${old.strongName?.state ?? 'unreadable'} → ${f.strongName?.state ?? 'unreadable'}`);
    else if (resigned) words.push('re-signed: same identity and key, new bytes');
    else if (has('strong-name')) words.push(`strong name ${old.strongName?.state ?? 'unreadable'} → ${f.strongName?.state ?? 'unreadable'}`);
    for (const a of aspects) {
      if (a.aspect === 'key') words.push(`key token ${a.before ?? 'none'} → ${a.after ?? 'none'}`);
      if (a.aspect === 'identity') words.push(`identity ${a.before ?? 'none'} → ${a.after ?? 'none'}`);
      if (a.aspect === 'vendor-attribute') words.push(`vendor attribute ${a.before} → ${a.after}`);
      if (a.aspect === 'option') words.push(`option ${a.before ?? 'none'} → ${a.after ?? 'none'}`);
      if (a.aspect === 'publisher') words.push(`Authenticode publisher ${a.before ?? 'none'} → ${a.after ?? 'none'}`);
    }
    if (words.length === 0) words.push('new bytes, same evidence');
    files.push({ name: f.name, aspects, regression: lost || vendorLost || (has('publisher') && publisherBefore !== null), summary: words.join('; ') });
  }
  return { added, removed, ...lists, files };
}

/** The fields of a file that are evidence: what the file is and what was found, not where it was read from or which job made it. */
const EVIDENCE_FIELDS = ['size', 'sha256', 'assembly', 'strongName', 'verdict', 'vendorAttribute', 'needsSigning', 'role', 'outcome', 'authenticode'] as const;

const show = (value: unknown) => (value === undefined ? 'absent' : JSON.stringify(value));

/**
 * Every difference between a stored audit report and one made now from the same inputs, one sentence each;
 * empty when they agree. Files match by name (relative to the release root); paths and jobs are not compared
 * (they depend on the working folder and on the machine), nor are the changes since a previous release.
 */
export function diffAuditReports(stored: AuditReport, fresh: AuditReport): string[] {
  const out: string[] = [];
  const a = stored.settings;
  const b = fresh.settings;
  if (a.vendor !== b.vendor) out.push(`vendor: report ${show(a.vendor)}, now ${show(b.vendor)}`);
  const tokens = (s: AuditReport['settings']) => s.keys.map((k) => k.token).join(', ');
  if (tokens(a) !== tokens(b)) out.push(`expected keys: report ${tokens(a)}, now ${tokens(b)}`);
  const key = nameKey(
    stored.files.map((f) => f.name),
    fresh.files.map((f) => f.name),
  );
  const storedFiles = new Map(stored.files.map((f) => [key(f.name), f]));
  const freshFiles = new Map(fresh.files.map((f) => [key(f.name), f]));
  for (const f of stored.files) if (!freshFiles.has(key(f.name))) out.push(`${f.name}: in the report, not in the folder`);
  for (const f of fresh.files) if (!storedFiles.has(key(f.name))) out.push(`${f.name}: in the folder, not in the report`);
  for (const f of stored.files) {
    const now = freshFiles.get(key(f.name));
    if (!now) continue;
    for (const field of EVIDENCE_FIELDS) {
      if (field === 'authenticode' && !('authenticode' in f)) continue; // a report of format 2 predates Authenticode
      const x = show(f[field]);
      const y = show(now[field]);
      if (x !== y) out.push(`${f.name}: ${field} in the report ${x}, now ${y}`);
    }
    if ('signature' in f) {
      // The entry of the signature record (a report of format 4; the same record is audited again).
      const entry = (x: AuditFile['signature']) => (x ? `entry ${x.seq} (${x.hash.slice(0, 16)}…)` : 'none');
      if (entry(f.signature) !== entry(now.signature))
        out.push(`${f.name}: signature record entry in the report ${entry(f.signature)}, now ${entry(now.signature)}`);
    }
    const ids = (list: readonly Finding[]) => list.map((x) => `${x.ruleId} ${x.message}`).join(' | ') || 'none';
    if (ids(f.findings) !== ids(now.findings)) out.push(`${f.name}: findings in the report ${ids(f.findings)}; now ${ids(now.findings)}`);
  }
  return out;
}

/**
 * How two lists of release names are matched: as Windows compares names (a report made on Windows matches a
 * folder read elsewhere), unless either list holds two names that Windows would take for one; then exactly,
 * so that neither of the two is lost from the comparison.
 */
export function nameKey(a: readonly string[], b: readonly string[]): (name: string) => string {
  const unambiguous = (names: readonly string[]) => new Set(names.map(windowsPathKey)).size === new Set(names).size;
  return unambiguous(a) && unambiguous(b) ? windowsPathKey : (name) => name;
}
