// fix's plan over a set, decided from facts alone (no file is read): which assemblies get a strong name, which stay
// as they are unread, which satellite belongs to which main assembly, and which files a refusal takes with it.
import { describe, expect, test } from 'vitest';
import {
  blockedByRefusals,
  planSet,
  staysAsItIs,
  type AssemblyFacts,
  type FixOutcome,
  type PlannedAssembly,
  type PlannedOther,
  type RefusalRow,
} from '../../src/strongname/fix-plan.js';
import { createStrongNameKeyPair, parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';

const ours = parseStrongNameKeyFile(createStrongNameKeyPair(1024));
const theirs = parseStrongNameKeyFile(createStrongNameKeyPair(1024));

function assembly(name: string, facts: Partial<AssemblyFacts> = {}): PlannedAssembly {
  return {
    kind: 'assembly',
    input: { absolutePath: `/build/${name}.dll`, displayPath: `build/${name}.dll`, explicit: false },
    name,
    before: 'unsigned',
    culture: '',
    publicKey: new Uint8Array(),
    references: [],
    unsignedReferences: [],
    friends: [],
    baml: false,
    signatureKeyAttribute: false,
    ...facts,
  };
}

const signedByThem = { before: 'signed', publicKey: theirs.publicKey.blob } as const;

describe('planSet: who gets a strong name', () => {
  test('the assemblies without one, by lower-case name; a signed referencer keeps its key without force', () => {
    const plan = planSet([assembly('AddIn'), assembly('Lib', signedByThem), assembly('Vendor', { ...signedByThem, references: ['AddIn'] })], false);
    expect([...plan.strongNamed]).toEqual(['addin']);
  });

  test('with force, another publisher referencing one is re-signed, and so on along the chain', () => {
    const set = [
      assembly('Top', { ...signedByThem, references: ['Middle'] }),
      assembly('Middle', { ...signedByThem, references: ['Base'] }),
      assembly('Base'),
      assembly('Apart', signedByThem),
    ];
    expect([...planSet(set, true).strongNamed].sort()).toEqual(['base', 'middle', 'top']);
  });

  test('a satellite (a culture, <Main>.resources) belongs to its main assembly, present or not', () => {
    const main = assembly('AddIn');
    const de = assembly('AddIn.resources', { culture: 'de' });
    const orphan = assembly('Gone.resources', { culture: 'fr' });
    const neutral = assembly('Other.resources', { culture: 'neutral' });
    const plan = planSet([main, de, orphan, neutral], false);
    expect(plan.satellites.get(de)).toEqual({ mainName: 'AddIn', main });
    expect(plan.satellites.get(orphan)).toEqual({ mainName: 'Gone' });
    expect(plan.satellites.has(neutral)).toBe(false);
    expect(plan.byName.get('addin')).toEqual([main]);
  });
});

describe('staysAsItIs: decided from the headers, the file not read whole', () => {
  const strongNamed = new Set(['addin']);
  test("another publisher's assembly that names nothing that changes stays", () => {
    expect(staysAsItIs(assembly('Lib', signedByThem), strongNamed, ours, false)).toBe(true);
  });
  test.each<[string, Partial<AssemblyFacts>, boolean]>([
    ['no public key', {}, false],
    ['a reference to an assembly that gets a strong name', { ...signedByThem, references: ['AddIn'] }, false],
    ['a friend without a key', { ...signedByThem, friends: ['Tests'] }, false],
    ['compiled XAML', { ...signedByThem, baml: true }, false],
    ['AssemblySignatureKeyAttribute', { ...signedByThem, signatureKeyAttribute: true }, false],
    ['our own key (its signature decides)', { before: 'signed', publicKey: ours.publicKey.blob }, false],
    ['a key blob the writer must judge', { before: 'signed', publicKey: new Uint8Array([1, 2, 3]) }, false],
  ])('%s: read whole', (_, facts, force) => {
    expect(staysAsItIs(assembly('Lib', facts), strongNamed, ours, force)).toBe(false);
  });
  test('with force every file is read whole', () => {
    expect(staysAsItIs(assembly('Lib', signedByThem), strongNamed, ours, true)).toBe(false);
  });
});

describe('blockedByRefusals: a refusal takes its part of the reference graph with it', () => {
  const row = (entry: PlannedAssembly | PlannedOther, outcome: FixOutcome, failed = false): RefusalRow => ({
    path: entry.input.displayPath,
    ...(entry.kind === 'assembly' ? { name: entry.name } : {}),
    outcome,
    failed,
  });

  test('a referencer of a refused assembly that gets a strong name is blocked, naming it; a file apart is not', () => {
    const lib = assembly('Lib');
    const addIn = assembly('AddIn', { references: ['Lib'] });
    const apart = assembly('Apart');
    const entries = [lib, addIn, apart];
    const rows = [row(lib, 'refused', true), row(addIn, 'references-updated'), row(apart, 'strong-named')];
    const blocked = blockedByRefusals(rows, entries, planSet(entries, false));
    expect([...blocked.keys()]).toEqual([rows[1]]);
    expect(blocked.get(rows[1]!)).toMatch(/^not fixed, because Lib \(build\/Lib\.dll\) could not be \(see its error\)/);
  });

  test('an unreadable file stands for the assembly its file name gives', () => {
    const unreadable: PlannedOther = {
      kind: 'refused',
      input: { absolutePath: '/build/Broken.dll', displayPath: 'build/Broken.dll', explicit: true },
      reason: { code: 'SG_ERR_FORMAT', message: 'truncated' },
      unreadable: true,
    };
    const user = assembly('User', { references: ['broken'] });
    const entries = [unreadable, user];
    const rows = [row(unreadable, 'refused', true), row(user, 'strong-named')];
    const blocked = blockedByRefusals(rows, entries, planSet([user], false));
    expect(blocked.get(rows[1]!)).toMatch(/because build\/Broken\.dll could not be/);
  });

  test('a satellite and its main assembly fall together; a file that does not change is not blocked', () => {
    const main = assembly('AddIn');
    const de = assembly('AddIn.resources', { culture: 'de' });
    const unchanged = assembly('Same', { ...signedByThem, references: ['AddIn'] });
    const entries = [main, de, unchanged];
    const rows = [row(main, 'refused', true), row(de, 'strong-named'), row(unchanged, 'unchanged')];
    const blocked = blockedByRefusals(rows, entries, planSet(entries, false));
    expect([...blocked.keys()]).toEqual([rows[1]]);
  });
});
