// Legal but hostile metadata must cost bounded work: shown by the reader's work counters and by the typed
// budget error, never by the clock.
import { describe, expect, test } from 'vitest';
import { DEFAULT_READER_BUDGETS } from '../../src/metadata/budget.js';
import { ModuleMetadata } from '../../src/metadata/module-metadata.js';
import { parsePeImage } from '../../src/pe/pe-image.js';
import { describeAttributes, inspectAssembly } from '../../src/strongname/assembly-info.js';
import { readModule } from '../../src/strongname/well-formed.js';
import { parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { classifyStrongName, signAssembly, verifyStrongName } from '../../src/strongname/strong-name.js';
import { defaultSettings, runCheck } from '../helpers/check.js';
import { fixture } from '../helpers/fixtures.js';
import { methodPtrAttributes, sharedAttributeBlob, sharedStringTails } from '../helpers/hostile-assemblies.js';

const MiB = 1024 * 1024;
const budgetError = expect.objectContaining({ code: 'SG_ERR_MD_BUDGET' });
const load = (bytes: Uint8Array, budgets = {}) => new ModuleMetadata(parsePeImage(bytes), { budgets });
const check = (bytes: Uint8Array) => runCheck([{ path: 'hostile.dll', uploadName: 'hostile.dll', bytes, explicit: true }], { settings: defaultSettings() });

describe('shared string tails (600 AssemblyRef and 600 TypeRef names in one 1 MiB run of #Strings)', () => {
  const bytes = sharedStringTails(600, MiB);

  test('a name longer than maxNameBytes is refused after reading at most maxNameBytes', () => {
    const md = load(bytes);
    expect(() => md.assemblyReferences).toThrowError(budgetError);
    expect(() => md.typeRefInfo(1)).toThrowError(budgetError);
    // Only the short names (module, assembly) were decoded; the scan for the NUL stopped at the cap.
    expect(md.work.stringBytes).toBeLessThan(100);
  });

  test('inspect reports the budget error as the file error, in a small record', () => {
    const info = inspectAssembly(bytes, 'hostile.dll');
    expect(info.error).toMatchObject({ code: 'SG_ERR_MD_BUDGET' });
    expect(JSON.stringify(info).length).toBeLessThan(16 * 1024);
  });

  test('check turns it into a malformed finding', async () => {
    const result = await check(bytes);
    expect(result.findings.map((f) => [f.rule, f.data?.code])).toContainEqual(['malformed', 'SG_ERR_MD_BUDGET']);
  });

  test('names under the cap still share the module budget for decoded strings', () => {
    // 2,000 names of 1,001 to 3,000 bytes: 4 MB to decode against a 1 MiB budget.
    const md = load(sharedStringTails(2_000, 3_000), { maxNameBytes: 4_096, maxStringBytes: MiB });
    expect(() => md.assemblyReferences).toThrowError(budgetError);
    expect(md.work.stringBytes).toBeLessThanOrEqual(MiB);
    expect(md.work.stringBytes).toBeGreaterThan(MiB - 3_000);
  });
});

describe('MethodPtr in #- (30,000 methods and 30,000 assembly attributes)', () => {
  const count = 30_000;
  const bytes = methodPtrAttributes(count);

  test('each attribute type is found through one inverse map of MethodPtr', () => {
    const md = load(bytes);
    const attributes = describeAttributes(md);
    expect(attributes).toHaveLength(count);
    expect(new Set(attributes.map((a) => a.type))).toEqual(new Set(['Test.HostileAttribute']));
    expect(attributes.every((a) => a.error === null)).toBe(true);
    // One pass over CustomAttribute and one over MethodPtr, not one MethodPtr search per attribute.
    expect(md.work.rowsScanned).toBe(2 * count);
  });

  test('signing and verifying scan each table a bounded number of times', () => {
    const md = load(bytes);
    expect(classifyStrongName(md).state).toBe('delay-signed');
    const signed = signAssembly(md, parseStrongNameKeyFile(fixture('test-keys/12345_keypair.snk')));
    expect(md.work.rowsScanned).toBeLessThanOrEqual(3 * count);
    // readModule's verdict scans TypeRef and CustomAttribute once more (checkStructure).
    const after = readModule(signed);
    expect(verifyStrongName(after).valid).toBe(true);
    expect(after.work.rowsScanned).toBeLessThanOrEqual(4 * count);
  });

  test('check reads the file without a finding for its metadata', async () => {
    expect((await check(bytes)).findings.map((f) => f.rule)).not.toContain('malformed');
  });

  test('a rows-scanned budget stops a module that needs more passes than it allows', () => {
    const md = load(bytes, { maxRowsScanned: count + 10 });
    expect(() => describeAttributes(md)).toThrowError(budgetError);
    expect(md.work.rowsScanned).toBeLessThanOrEqual(count + 10);
  });
});

describe('one shared attribute blob holding a 1 MiB string (1,500 assembly attributes)', () => {
  const bytes = sharedAttributeBlob(1_500, MiB);

  test('decoding stops at the attribute-value budget; the string is decoded once', () => {
    const md = load(bytes);
    expect(() => describeAttributes(md)).toThrowError(budgetError);
    expect(md.work.attributeValueBytes).toBeLessThanOrEqual(DEFAULT_READER_BUDGETS.maxAttributeValueBytes);
    expect(md.work.stringBytes).toBeLessThan(MiB + 100);
  });

  test('inspect reports the budget error as the file error, in a small record', () => {
    const info = inspectAssembly(bytes, 'hostile.dll');
    expect(info.error).toMatchObject({ code: 'SG_ERR_MD_BUDGET' });
    expect(info.attributes).toEqual([]);
    expect(JSON.stringify(info).length).toBeLessThan(16 * 1024);
  });

  test('under the budget, attributes sharing a blob share its decoded string', () => {
    const md = load(sharedAttributeBlob(10, 100_000));
    const attributes = describeAttributes(md);
    expect(attributes).toHaveLength(10);
    expect(attributes.every((a) => a.arguments?.[0]?.value === 'x'.repeat(100_000))).toBe(true);
    expect(md.work.stringBytes).toBeLessThan(100_000 + 100);
    expect(md.work.attributeValueBytes).toBeGreaterThanOrEqual(10 * 100_000);
  });

  test('the number of attributes described is capped', () => {
    const md = load(sharedAttributeBlob(50, 10), { maxDescribedAttributes: 20 });
    expect(() => describeAttributes(md)).toThrowError(budgetError);
    expect(md.work.attributeValueBytes).toBe(0);
  });
});
