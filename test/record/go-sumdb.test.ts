// The signature record against a verifier nobody here wrote: Go's golang.org/x/mod/sumdb/note and sumdb/tlog, the
// code of Go's checksum database (tools/record-go, built once per run from Debian's golang-go and
// golang-golang-x-mod-dev, offline). Over the same record, tlog's roots and proofs must be byte for byte ours and
// tlog must accept our proofs; note.Open must accept our checkpoints with our verifier key and read the same origin,
// size and root; whatever was tampered with, both must refuse. The last block holds the notes note.Open refuses
// for their form alone (a carriage return, a bad signature line before a good one of the same key, a 101st signature
// line, a control character, a blank line among the signatures): our parseCheckpoint must refuse them too.
import { spawnSync } from 'node:child_process';
import { createHash, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { entryLeaf, formatVerifierKey, parseCheckpoint, recordPrivateKey, signCheckpoint, verifierOf } from '../../src/record/checkpoint.js';
import { consistencyProof, inclusionProof, leafHash, rootHash, verifyConsistency, verifyInclusion } from '../../src/record/merkle.js';
import type { Hash, SubtreeCache } from '../../src/record/merkle.js';
import { chainEvents, EMPTY_HEAD, entryLine, type SignatureEvent } from '../../src/record/signature-record.js';
import { RecordLog } from '../../src/server/record/record-checkpoint.js';
import { FileSignatureRecord } from '../../src/server/backends/data-dir/record-file.js';
import type { RecordKey } from '../../src/server/record-key.js';
import { RECORD_TREE_FILE } from '../../src/server/backends/data-dir/record-tree-file.js';

// Debian's golang-golang-x-mod-dev puts the sources in a GOPATH; GO111MODULE=off builds against them without a download.
const GOPATH = '/usr/share/gocode';
const PACKAGES = 'golang-go golang-golang-x-mod-dev';
// Found from this file rather than through helpers/fixtures.js, whose import requires Mono in CI.
const TOOL_DIR = fileURLToPath(new URL('../../tools/record-go/', import.meta.url));

/** Why the Go side cannot run here, or undefined when go and the x/mod sources are there. */
function goMissing(): string | undefined {
  const version = spawnSync('go', ['version'], { encoding: 'utf8' });
  if (version.error || version.status !== 0) return `the go command does not run (${version.error?.message ?? version.stderr.trim()})`;
  for (const pkg of ['note/note.go', 'tlog/tlog.go']) {
    const source = join(GOPATH, 'src', 'golang.org', 'x', 'mod', 'sumdb', pkg);
    if (!existsSync(source)) return `${source} is missing`;
  }
  return undefined;
}
const missing = goMissing();
const missingMessage = `${missing}: the cross-check with Go's sumdb needs the Debian packages ${PACKAGES} (apt-get install -y ${PACKAGES})`;

let built: string | undefined;

/** tools/record-go, built on first use into this run's temporary folder. */
function recordGo(): string {
  if (built) return built;
  const dir = mkdtempSync(join(tmpdir(), 'record-go-'));
  const binary = join(dir, 'record-go');
  const env = { ...process.env, GO111MODULE: 'off', GOPATH, GOCACHE: join(dir, 'cache'), GOFLAGS: '', GOPROXY: 'off', CGO_ENABLED: '0' };
  const build = spawnSync('go', ['build', '-o', binary, '.'], { cwd: TOOL_DIR, env, encoding: 'utf8' });
  if (build.status !== 0) {
    throw new Error(`building tools/record-go failed (${build.error?.message ?? `exit ${build.status}`}):\n${build.stdout}${build.stderr}`);
  }
  built = binary;
  return binary;
}

type GoRequest =
  | { op: 'open'; text: string; key: string }
  | { op: 'root'; size: number }
  | { op: 'stored' }
  | { op: 'proveRecord'; size: number; index: number }
  | { op: 'proveTree'; size: number; old: number }
  | { op: 'checkRecord'; proof: string[]; size: number; root: string; index: number; leaf: string }
  | { op: 'checkTree'; proof: string[]; size: number; root: string; old: number; oldRoot: string };

interface GoAnswer {
  readonly error?: string;
  readonly ok?: boolean;
  readonly origin?: string;
  readonly size?: number;
  readonly root?: string;
  readonly lines?: string[];
  readonly proof?: string[];
}

/** What Go answers to each request, in one run of tools/record-go over the leaf data `leaves`. */
function askGo(requests: readonly GoRequest[], leaves: readonly string[] = []): GoAnswer[] {
  const run = spawnSync(recordGo(), [], { input: JSON.stringify({ leaves, requests }), encoding: 'utf8', maxBuffer: 1 << 30 });
  if (run.status !== 0) throw new Error(`tools/record-go failed (${run.error?.message ?? `exit ${run.status}`}): ${run.stderr}`);
  const { answers } = JSON.parse(run.stdout) as { answers: GoAnswer[] };
  if (answers.length !== requests.length) throw new Error(`tools/record-go answered ${answers.length} of ${requests.length} requests`);
  return answers;
}

/** A question to Go and the answer it must give (`want` says what is wrong with another answer, or undefined). */
interface GoCheck {
  readonly what: string;
  readonly request: GoRequest;
  readonly want: (a: GoAnswer) => string | undefined;
}

/** Asks Go every check in one run; the checks it answered otherwise, each named with Go's answer (empty when none). */
function goDisagrees(checks: readonly GoCheck[], leaves?: readonly string[]): string[] {
  const answers = askGo(
    checks.map((c) => c.request),
    leaves,
  );
  return checks.flatMap((c, i) => {
    const wrong = c.want(answers[i]!);
    return wrong === undefined ? [] : [`${c.what}: ${wrong} (Go answered ${JSON.stringify(answers[i]).slice(0, 300)})`];
  });
}

const b64 = (h: Uint8Array) => Buffer.from(h).toString('base64');
const sameProof = (ours: readonly Hash[]) => (a: GoAnswer) =>
  a.error !== undefined ? 'Go refused' : JSON.stringify(a.proof ?? []) === JSON.stringify(ours.map(b64)) ? undefined : 'another proof than ours';
const accepted = (a: GoAnswer) => (a.error === undefined && a.ok === true ? undefined : 'Go did not accept it');
const refused = (why: RegExp) => (a: GoAnswer) => (a.error !== undefined && why.test(a.error) ? undefined : `Go did not refuse it with ${why}`);
/** A copy of the hash with one bit flipped. */
const flipped = (h: Uint8Array, bit = 0) => {
  const c = Buffer.from(h);
  c[bit >> 3]! ^= 1 << (bit & 7);
  return c;
};

// Go's errors (sumdb/tlog, then sumdb/note): a proof that does not check out, a note whose signature by the known key
// fails, a note without a signature of a known key, a note not of the signed-note form.
const PROOF_FAILED = /invalid transparency proof/;
const BAD_SIGNATURE = /invalid signature for key/;
const NOT_SIGNED = /note has no verifiable signatures/;
const MALFORMED = /malformed note/;

// A record of 1025 entries: texts with non-ASCII characters, a null token id, both kinds of key location.
const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const event = (n: number): SignatureEvent => ({
  time: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
  organization: n % 7 === 0 ? 'Zürich Add-ins AG' : 'sandbox',
  user: `user-${n % 5}`,
  tokenId: n % 3 === 0 ? null : sha(`token ${n % 4}`).slice(0, 16),
  job: `job-${Math.floor(n / 4)}`,
  file: n % 11 === 0 ? `Addins/Ünïcödé €/F${n}.dll` : `Addins/F${n}.dll`,
  uploadedSha256: sha(`uploaded ${n}`),
  signedSha256: sha(`signed ${n}`),
  optionId: 12345,
  keyToken: '0123456789abcdef',
  keyLocation: n % 2 === 0 ? 'pkcs11:token=signgate;object=key-1' : '../test-keys/12345_keypair.snk',
});
const ENTRIES = chainEvents(
  EMPTY_HEAD,
  Array.from({ length: 1025 }, (_, i) => event(i + 1)),
);
/** The leaf data Go hashes: the record file's lines, as the file holds them. */
const LEAF_DATA = ENTRIES.map(entryLine).join('').split('\n').slice(0, -1);
/** Our leaves of the same entries. */
const LEAVES = ENTRIES.map(entryLeaf);
const CACHE: SubtreeCache = new Map();
const rootOf = (size: number) => rootHash(LEAVES, 0, size, CACHE);
/** The size of another tree than the first `size` leaves: the next one, or the one before for the whole record. */
const otherSize = (size: number) => (size < LEAVES.length ? size + 1 : size - 1);

// Every size from 1 to 70 (every shape of small tree), powers of two and their neighbours, and the whole record.
// Go's TreeHash of the empty tree is 32 zero bytes where RFC 9162 (and we) have SHA-256 of nothing: size 0 is left out.
const SIZES = [...Array.from({ length: 70 }, (_, i) => i + 1), 127, 128, 129, 1000, 1024, 1025];

function newKey(): KeyObject {
  // Through recordPrivateKey, as the service reads its key file.
  return recordPrivateKey(generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }));
}
const KEY = newKey();
const VERIFIER = verifierOf(KEY);
const VKEY = formatVerifierKey(VERIFIER);

/** The signature line of `key` (as `name`) over a note text, made here rather than by signCheckpoint. */
function signatureLine(text: string, key: KeyObject, name = verifierOf(key).name): string {
  const v = verifierOf(key, name);
  return `\u2014 ${name} ${Buffer.concat([v.keyId, sign(null, Buffer.from(text, 'utf8'), key)]).toString('base64')}`;
}
/** A checkpoint's text (what is signed) and its signature lines. */
function splitNote(note: string): { text: string; signatures: string[] } {
  const at = note.lastIndexOf('\n\n');
  return {
    text: note.slice(0, at + 1),
    signatures: note
      .slice(at + 2)
      .split('\n')
      .slice(0, -1),
  };
}
const joinNote = (text: string, signatures: readonly string[]) => `${text}\n${signatures.map((s) => `${s}\n`).join('')}`;

/** The checkpoint of the first `size` entries, signed by KEY. */
const checkpointOf = (size: number) => signCheckpoint({ size, root: rootOf(size) }, KEY);
const opens = (origin: string, size: number, root: Hash) => (a: GoAnswer) =>
  a.error !== undefined
    ? 'Go refused it'
    : a.origin !== origin || a.size !== size || a.root !== b64(root)
      ? `Go read ${a.origin} ${a.size} ${a.root}, not ${origin} ${size} ${b64(root)}`
      : undefined;

/** note.Open of `text` with the verifier key `key` (ours by default), and what it must answer. */
const openCheck = (what: string, text: string, want: GoCheck['want'], key = VKEY): GoCheck => ({ what, request: { op: 'open', text, key }, want });

/** Proofs that must not check out: `add` each with tlog's check of it and our verdict, then `expectRefused`. */
function badProofs(): { add: (what: string, request: GoRequest, oursAccepts: boolean) => void; expectRefused: (atLeast: number) => void } {
  const checks: GoCheck[] = [];
  const ours: string[] = [];
  return {
    add: (what, request, oursAccepts) => {
      checks.push({ what, request, want: refused(PROOF_FAILED) });
      if (oursAccepts) ours.push(`${what}: ours accepted it`);
    },
    expectRefused: (atLeast) => {
      expect(checks.length).toBeGreaterThan(atLeast);
      expect(goDisagrees(checks)).toEqual([]);
      expect(ours).toEqual([]);
    },
  };
}

/** Which of `notes` our parseCheckpoint accepts (with VERIFIER), named: empty when it refuses them all. */
function oursAccepts(notes: readonly { what: string; text: string }[]): string[] {
  return notes.flatMap(({ what, text }) => {
    try {
      parseCheckpoint(text, VERIFIER, what);
      return [`${what}: parseCheckpoint accepted it`];
    } catch {
      return [];
    }
  });
}

/** Signature lines of `count` other keys (each its own name) over `text`. */
const otherSignatures = (text: string, count: number) => Array.from({ length: count }, (_, i) => signatureLine(text, newKey(), `witness-${i + 1}.example`));

if (missing && process.env.CI === 'true') {
  // In CI the cross-check must run: .ci/run installs both packages.
  describe('the Go cross-check of the signature record', () => {
    test(`Go and golang.org/x/mod are installed (${PACKAGES})`, () => {
      throw new Error(`CI is set but ${missingMessage}`);
    });
  });
} else if (missing) {
  describe('the Go cross-check of the signature record', () => {
    test(`Go and golang.org/x/mod are installed (${PACKAGES})`, (ctx) => {
      ctx.skip(missingMessage);
    });
  });
}

describe.skipIf(missing !== undefined)("Go's sumdb/tlog: the same tree, the same proofs", () => {
  test("over the same leaf data, tlog's root of every size is ours, so is every inclusion and consistency proof, and tlog accepts ours", () => {
    const checks: GoCheck[] = [];
    for (const size of SIZES) {
      const root = rootOf(size);
      const sameRoot = (a: GoAnswer) => (a.root === b64(root) ? undefined : `Go's root is not ours ${b64(root)}`);
      checks.push({ what: `root of ${size}`, request: { op: 'root', size }, want: sameRoot });
      for (let index = 0; index < size; index++) {
        const proof = inclusionProof(LEAVES, index, size, CACHE);
        checks.push({ what: `inclusion proof of ${index} in ${size}`, request: { op: 'proveRecord', size, index }, want: sameProof(proof) });
        const check = { op: 'checkRecord', proof: proof.map(b64), size, root: b64(root), index, leaf: b64(LEAVES[index]!) } as const;
        checks.push({ what: `tlog.CheckRecord of our proof of ${index} in ${size}`, request: check, want: accepted });
      }
      for (let old = 1; old <= size; old++) {
        const proof = consistencyProof(LEAVES, old, size, CACHE);
        checks.push({ what: `consistency proof from ${old} to ${size}`, request: { op: 'proveTree', size, old }, want: sameProof(proof) });
        const check = { op: 'checkTree', proof: proof.map(b64), size, root: b64(root), old, oldRoot: b64(rootOf(old)) } as const;
        checks.push({ what: `tlog.CheckTree of our proof from ${old} to ${size}`, request: check, want: accepted });
      }
    }
    expect(goDisagrees(checks, LEAF_DATA)).toEqual([]);
  });

  test("the service's stored tree (a data directory's signature-record.tree) is tlog's stored hashes byte for byte, and so are the proofs it serves", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'signgate-go-tree-'));
    const record = new FileSignatureRecord(dataDir);
    const key: RecordKey = { privateKey: KEY, verifier: VERIFIER, path: 'test key' };
    // Appended in three parts, the log read on after each, as a service does between jobs.
    const events = ENTRIES.map(({ seq: _seq, prev: _prev, hash: _hash, ...event }) => event);
    let log = new RecordLog(record, key);
    for (const [from, to] of [
      [0, 1],
      [1, 700],
      [700, 1025],
    ] as const) {
      await record.append(events.slice(from, to));
      await log.refresh();
      if (from === 1) log = new RecordLog(record, key); // a restart: the tree is taken up where it ends
    }
    const [stored] = askGo([{ op: 'stored' }], LEAF_DATA);
    expect(readFileSync(join(dataDir, RECORD_TREE_FILE)).toString('base64')).toBe(
      Buffer.concat((stored!.proof ?? []).map((h) => Buffer.from(h, 'base64'))).toString('base64'),
    );
    const checks: GoCheck[] = [];
    for (const old of [1, 700, 1000])
      checks.push({
        what: `the service's consistency proof from ${old}`,
        request: { op: 'proveTree', size: 1025, old },
        want: sameProof((await log.consistency(old, 1025)).map((h) => Buffer.from(h, 'base64'))),
      });
    const job = await log.jobProof('job-100');
    expect(job?.entries.map((e) => e.leafIndex)).toEqual([399, 400, 401, 402]);
    for (const e of job!.entries)
      checks.push({
        what: `job-100's proof of ${e.leafIndex}`,
        request: { op: 'proveRecord', size: 1025, index: e.leafIndex },
        want: sameProof(e.inclusionProof.map((h) => Buffer.from(h, 'base64'))),
      });
    expect(goDisagrees(checks, LEAF_DATA)).toEqual([]);
    expect(parseCheckpoint(await log.checkpoint(), VERIFIER, 'the service').root.equals(rootOf(1025))).toBe(true);
  });

  test("the leaf is the entry's line without its newline: with the newline, or another entry's line, tlog finds another root", () => {
    const root = b64(rootOf(3));
    const answers = askGo([{ op: 'root', size: 3 }], [...LEAF_DATA.slice(0, 2), `${LEAF_DATA[2]}\n`]);
    expect(answers[0]!.root).not.toBe(root);
    const swapped = askGo([{ op: 'root', size: 3 }], [LEAF_DATA[0]!, LEAF_DATA[2]!, LEAF_DATA[1]!]);
    expect(swapped[0]!.root).not.toBe(root);
    expect(askGo([{ op: 'root', size: 3 }], LEAF_DATA.slice(0, 3))[0]!.root).toBe(root);
  });

  test('an inclusion proof with a changed hash, for another index, cut short or against another root: tlog and ours refuse it', () => {
    const bad = badProofs();
    const refuse = (what: string, proof: readonly Hash[], size: number, root: Hash, index: number, leaf: Hash) => {
      const request = { op: 'checkRecord', proof: proof.map(b64), size, root: b64(root), index, leaf: b64(leaf) } as const;
      bad.add(what, request, verifyInclusion(leaf, index, size, proof, root));
    };
    for (const size of [2, 3, 5, 7, 8, 9, 13, 64, 70, 1000, 1025]) {
      const root = rootOf(size);
      for (const index of new Set([0, 1, size >> 1, size - 2, size - 1])) {
        const proof = inclusionProof(LEAVES, index, size, CACHE);
        const leaf = LEAVES[index]!;
        const at = `leaf ${index} of ${size}`;
        proof.forEach((_, j) => {
          for (const bit of [0, 255]) {
            refuse(
              `${at}, bit ${bit} of hash ${j} flipped`,
              proof.map((h, k) => (k === j ? flipped(h, bit) : h)),
              size,
              root,
              index,
              leaf,
            );
          }
        });
        refuse(`${at}, claimed for leaf ${(index + 1) % size}`, proof, size, root, (index + 1) % size, leaf);
        refuse(`${at}, with leaf ${(index + 1) % size}'s hash`, proof, size, root, index, LEAVES[(index + 1) % size]!);
        refuse(`${at}, its last hash cut off`, proof.slice(0, -1), size, root, index, leaf);
        refuse(`${at}, its first hash cut off`, proof.slice(1), size, root, index, leaf);
        refuse(`${at}, a hash added`, [...proof, root], size, root, index, leaf);
        refuse(`${at}, against the root of ${otherSize(size)}`, proof, size, rootOf(otherSize(size)), index, leaf);
      }
    }
    bad.expectRefused(500);
  });

  test('a consistency proof with a changed hash, cut short, from a rewritten old tree or to another new one: tlog and ours refuse it', () => {
    const bad = badProofs();
    const refuse = (what: string, proof: readonly Hash[], old: number, oldRoot: Hash, size: number, root: Hash) => {
      const request = { op: 'checkTree', proof: proof.map(b64), size, root: b64(root), old, oldRoot: b64(oldRoot) } as const;
      bad.add(what, request, verifyConsistency(old, size, oldRoot, root, proof));
    };
    for (const size of [3, 5, 7, 8, 9, 13, 64, 70, 1000, 1025]) {
      for (const old of new Set([1, 2, 3, size >> 1, size - 1].filter((o) => o >= 1 && o < size))) {
        const proof = consistencyProof(LEAVES, old, size, CACHE);
        const [oldRoot, root] = [rootOf(old), rootOf(size)];
        const at = `from ${old} to ${size}`;
        proof.forEach((_, j) =>
          refuse(
            `${at}, hash ${j} changed`,
            proof.map((h, k) => (k === j ? flipped(h, 7) : h)),
            old,
            oldRoot,
            size,
            root,
          ),
        );
        refuse(`${at}, its last hash cut off`, proof.slice(0, -1), old, oldRoot, size, root);
        refuse(`${at}, its first hash cut off`, proof.slice(1), old, oldRoot, size, root);
        // The old tree rewritten: its last leaf replaced.
        const rewritten = rootHash([...LEAVES.slice(0, old - 1), leafHash(Buffer.from('forged'))]);
        refuse(`${at}, from a rewritten old tree`, proof, old, rewritten, size, root);
        refuse(`${at}, to the root of ${otherSize(size)}`, proof, old, oldRoot, size, rootOf(otherSize(size)));
      }
    }
    bad.expectRefused(200);
  });
});

describe.skipIf(missing !== undefined)("Go's sumdb/note: our checkpoints", () => {
  test('note.Open accepts our checkpoints with our verifier key and reads the same origin, size and root', () => {
    const named = newKey();
    const sizes = [0, 1, 2, 5, 70, 1000, 1025];
    const checks = sizes.map((size) => openCheck(`the checkpoint of ${size}`, checkpointOf(size), opens(VERIFIER.name, size, rootOf(size))));
    // A key under a name of its own, which is the origin then.
    const name = 'signgate.example/record';
    const text = signCheckpoint({ size: 9, root: rootOf(9) }, named, name);
    checks.push(openCheck(`a checkpoint of the key named ${name}`, text, opens(name, 9, rootOf(9)), formatVerifierKey(verifierOf(named, name))));
    expect(goDisagrees(checks)).toEqual([]);
    // And ours reads the same.
    const cp = parseCheckpoint(checkpointOf(1025), VERIFIER, 'the checkpoint');
    expect([cp.origin, cp.size, b64(cp.root)]).toEqual([VERIFIER.name, 1025, b64(rootOf(1025))]);
  });

  test('a changed size, root or origin, a flipped signature byte, a signature by another key: note.Open and ours refuse it', () => {
    const original = checkpointOf(70);
    const { text, signatures } = splitNote(original);
    const [origin, size, root] = text.split('\n');
    const tampered: { what: string; text: string; why: RegExp }[] = [
      { what: 'the size changed', text: joinNote(`${origin}\n71\n${root}\n`, signatures), why: BAD_SIGNATURE },
      { what: 'the size 0', text: joinNote(`${origin}\n0\n${root}\n`, signatures), why: BAD_SIGNATURE },
      { what: 'the root changed', text: joinNote(`${origin}\n${size}\n${b64(flipped(Buffer.from(root!, 'base64'), 100))}\n`, signatures), why: BAD_SIGNATURE },
      { what: 'the root of 69', text: joinNote(`${origin}\n${size}\n${b64(rootOf(69))}\n`, signatures), why: BAD_SIGNATURE },
      { what: 'the origin changed', text: joinNote(`${origin}x\n${size}\n${root}\n`, signatures), why: BAD_SIGNATURE },
      { what: 'a line added to the text', text: joinNote(`${text}extra\n`, signatures), why: BAD_SIGNATURE },
    ];
    // Every byte of the signature flipped: in the key id the key is unknown then, in the signature it fails.
    const raw = Buffer.from(signatures[0]!.split(' ')[2]!, 'base64');
    for (let i = 0; i < raw.length; i++) {
      const sig = `\u2014 ${VERIFIER.name} ${b64(flipped(raw, i * 8 + (i % 8)))}`;
      tampered.push({ what: `signature byte ${i} flipped`, text: joinNote(text, [sig]), why: i < 4 ? NOT_SIGNED : BAD_SIGNATURE });
    }
    const other = newKey();
    tampered.push({ what: 'signed by another key', text: signCheckpoint({ size: 70, root: rootOf(70) }, other), why: NOT_SIGNED });
    tampered.push({ what: "signed by another key under our key's name", text: joinNote(text, [signatureLine(text, other, VERIFIER.name)]), why: NOT_SIGNED });
    // Another key's signature given our key id: the key is found, its signature fails.
    const forged = Buffer.from(signatureLine(text, other, VERIFIER.name).split(' ')[2]!, 'base64');
    VERIFIER.keyId.copy(forged, 0);
    tampered.push({ what: "another key's signature with our key id", text: joinNote(text, [`\u2014 ${VERIFIER.name} ${b64(forged)}`]), why: BAD_SIGNATURE });
    tampered.push({ what: 'no signature line', text: `${text}\n`, why: MALFORMED });

    const checks = tampered.map(({ what, text: t, why }) => openCheck(what, t, refused(why)));
    // The untouched checkpoint, in the same run: it opens, so the refusals are for the changes.
    checks.push(openCheck('the untouched checkpoint', original, opens(VERIFIER.name, 70, rootOf(70))));
    expect(goDisagrees(checks)).toEqual([]);
    expect(oursAccepts(tampered)).toEqual([]);
  });

  test('the forms the edge cases below change, without the fault, are accepted by note.Open and ours', () => {
    // Each is the sound twin of a note the last block refuses: one signature line (not two), 100 signature lines (not
    // 101), a text line without a control character, the signature lines without a blank line among them.
    const { text, signatures } = splitNote(checkpointOf(70));
    const extended = `${text}extension line\n`;
    const sound: { what: string; text: string }[] = [
      { what: 'one signature line', text: joinNote(text, signatures) },
      { what: 'our signature and 99 of other keys (100 lines)', text: joinNote(text, [...signatures, ...otherSignatures(text, 99)]) },
      { what: 'an extension line without a control character', text: joinNote(extended, [signatureLine(extended, KEY)]) },
      { what: "our signature, then another key's", text: joinNote(text, [...signatures, ...otherSignatures(text, 1)]) },
    ];
    expect(goDisagrees(sound.map(({ what, text: t }) => openCheck(what, t, opens(VERIFIER.name, 70, rootOf(70)))))).toEqual([]);
    for (const { what, text: t } of sound) expect(parseCheckpoint(t, VERIFIER, what).root.equals(rootOf(70)), what).toBe(true);
  });
});

// Checked after the merge of the stricter parseCheckpoint (control characters but the newline refused, the text
// split at the last blank line, one signature line per key, at most 100 signature lines): until then some of these
// fail on our side. Go's verdict is asserted first in each, so a failure there is about Go, not us.
describe.skipIf(missing !== undefined)('parser edge cases: ours rejects what Go rejects', () => {
  const { text, signatures } = splitNote(checkpointOf(70));
  const good = signatures[0]!;
  const bad = `\u2014 ${VERIFIER.name} ${b64(flipped(Buffer.from(good.split(' ')[2]!, 'base64'), 8 * 10))}`;
  /** A note signed validly by KEY whose text has `line` after the root. */
  const withLine = (line: string) => {
    const t = `${text}${line}\n`;
    return joinNote(t, [signatureLine(t, KEY)]);
  };
  const cases: { what: string; text: string; why: RegExp }[] = [
    { what: 'a CRLF copy of a valid checkpoint', text: checkpointOf(70).replace(/\n/g, '\r\n'), why: MALFORMED },
    { what: 'a bad signature line by the key, then a good one', text: joinNote(text, [bad, good]), why: BAD_SIGNATURE },
    { what: 'our signature and 100 of other keys (101 lines)', text: joinNote(text, [good, ...otherSignatures(text, 100)]), why: MALFORMED },
    { what: 'a tab in a text line', text: withLine('extension\tline'), why: MALFORMED },
    { what: 'a \\x01 in a text line', text: withLine('extension\x01line'), why: MALFORMED },
    { what: "a \\x01 in another key's signature line", text: joinNote(text, [good, signatureLine(text, newKey(), 'witness\x01.example')]), why: MALFORMED },
    // Go signs and checks the text up to the last blank line: the good signature line is then part of the text.
    { what: 'a blank line among the signature lines', text: joinNote(`${text}\n${good}\n`, otherSignatures(text, 1)), why: NOT_SIGNED },
  ];
  for (const c of cases) {
    test(`${c.what}: Go refuses it, and so does ours`, () => {
      // Every one is far below the 16 KiB bound of a checkpoint: refused for its form, not its size.
      expect(Buffer.byteLength(c.text, 'utf8')).toBeLessThan(16 * 1024);
      expect(goDisagrees([openCheck(c.what, c.text, refused(c.why))])).toEqual([]);
      expect(oursAccepts([c])).toEqual([]);
    });
  }

  test('a good signature line twice: Go accepts it (note.Open drops a repeated signature of a key), ours refuses the second line by the key', () => {
    const twice = joinNote(text, [good, good]);
    // Not a case of Go refusing: asserted so that the difference stays known (ours is the stricter one).
    expect(goDisagrees([openCheck('the good line twice', twice, opens(VERIFIER.name, 70, rootOf(70)))])).toEqual([]);
    expect(oursAccepts([{ what: 'the good line twice', text: twice }])).toEqual([]);
  });
});
