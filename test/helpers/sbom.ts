// SBOMs as the tests read them: validated with the CycloneDX library's strict JSON-schema validator, and checked for
// every field BSI TR-03183-2 v2.1 requires (docs/audit.md has the table this follows, field by field).
import CDX from '@cyclonedx/cyclonedx-library';
import { expect } from 'vitest';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const validators = new Map<string, InstanceType<typeof CDX.Validation.JsonStrictValidator>>();

/** Fails the test unless `text` is valid CycloneDX of its `specVersion` by the library's strict validator. */
export async function expectValidSbom(text: string): Promise<Json> {
  const bom = JSON.parse(text) as Json;
  expect(['1.6', '1.7']).toContain(bom.specVersion);
  let validator = validators.get(bom.specVersion);
  if (!validator) validators.set(bom.specVersion, (validator = new CDX.Validation.JsonStrictValidator(bom.specVersion)));
  expect(await validator.validate(text)).toBeNull();
  return bom;
}

const prop = (c: Json, name: string): string[] => ((c.properties ?? []) as Json[]).filter((p) => p.name === name).map((p) => p.value as string);
const isUri = (s: unknown) => typeof s === 'string' && /^[a-z][a-z0-9+.-]*:\S+$/i.test(s);

/** The SBOM's fields of TR-03183-2 v2.1 (5.2.1, and the format of 4): name → present. */
export function sbomFields(bom: Json): Record<string, boolean> {
  const m = bom.metadata ?? {};
  const creator = m.manufacturer ?? {};
  return {
    'format: CycloneDX 1.6 or later': bom.bomFormat === 'CycloneDX' && ['1.6', '1.7'].includes(bom.specVersion),
    'creator of the SBOM (e-mail or URL)': (creator.url ?? []).some(isUri) || (creator.contact ?? []).some((c: Json) => /@/.test(c.email ?? '')),
    timestamp: typeof m.timestamp === 'string' && !Number.isNaN(Date.parse(m.timestamp)),
    'SBOM-URI': /^urn:uuid:[0-9a-f-]{36}$/.test(bom.serialNumber ?? '') && Number.isInteger(bom.version),
  };
}

/** One component's fields of TR-03183-2 v2.1 (5.2.2): name → present. */
export function componentFields(bom: Json, c: Json): Record<string, boolean> {
  const refs = (c.externalReferences ?? []) as Json[];
  const licences = (c.licenses ?? []) as Json[];
  const ack = (a: string) => licences.some((l) => (l.license?.acknowledgement ?? l.acknowledgement) === a);
  const inGraph = ((bom.dependencies ?? []) as Json[]).some((d) => d.ref === c['bom-ref']);
  const completeness = ((bom.compositions ?? []) as Json[]).some((k) => (k.dependencies ?? []).includes(c['bom-ref']) && typeof k.aggregate === 'string');
  const hashes = (c.hashes ?? []) as Json[];
  return {
    'creator (e-mail or URL)': (c.manufacturer?.url ?? []).some(isUri) || (c.manufacturer?.contact ?? []).some((x: Json) => /@/.test(x.email ?? '')),
    name: typeof c.name === 'string' && c.name.length > 0,
    version: typeof c.version === 'string' && c.version.length > 0 && c.version !== 'unknown',
    filename: prop(c, 'bsi:component:filename').length === 1,
    'dependencies, with completeness': inGraph && completeness,
    'distribution licences': ack('concluded') || (ack('declared') && prop(c, 'signgate:licence:concluded').length === 1),
    'SHA-512 of the deployable component': hashes.some((h) => h.alg === 'SHA-512' && /^[0-9a-f]{128}$/.test(h.content)),
    executable: ['executable', 'non-executable'].includes(prop(c, 'bsi:component:executable')[0] ?? ''),
    archive: ['archive', 'no archive'].includes(prop(c, 'bsi:component:archive')[0] ?? ''),
    structured: ['structured', 'unstructured'].includes(prop(c, 'bsi:component:structured')[0] ?? ''),
    'source code URI': refs.some((r) => r.type === 'source-distribution' && isUri(r.url)),
    'URI of the deployable form': refs.some((r) => r.type === 'distribution' && isUri(r.url)),
    'other unique identifiers (purl)': typeof c.purl === 'string' && c.purl.startsWith('pkg:'),
    'original licences': ack('declared'),
  };
}

/** Fails naming each field TR-03183-2 v2.1 requires that the SBOM or one of its components lacks. */
export function expectEveryRequiredField(bom: Json): void {
  const missing: string[] = [];
  for (const [field, ok] of Object.entries(sbomFields(bom))) if (!ok) missing.push(`SBOM: ${field}`);
  for (const c of [bom.metadata.component, ...(bom.components as Json[])])
    for (const [field, ok] of Object.entries(componentFields(bom, c))) if (!ok) missing.push(`${c['bom-ref']}: ${field}`);
  expect(missing).toEqual([]);
  expect(Object.keys(sbomFields(bom)).length + Object.keys(componentFields(bom, bom.metadata.component)).length).toBe(18);
}
