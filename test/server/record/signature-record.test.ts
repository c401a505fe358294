// The signature record: every file the service signs gets an entry, chained by hash. In the data directory (a JSON
// line per entry, fsync'd, a head beside it) and in PostgreSQL (a row per entry, the head's row locked by every
// append): truncation, a changed byte, a removed entry and a reordered pair are each found by verify, and
// concurrent appends make one chain without gaps or forks.
import { createHash, createPublicKey, verify as cryptoVerify } from 'node:crypto';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, test } from 'vitest';
import { chainEvents, EMPTY_HEAD, entryLine, verifyRecordText, type SignatureEvent } from '../../../src/record/signature-record.js';
import { loadRecordKey, RECORD_PUBLIC_KEY_FILE } from '../../../src/server/record-key.js';
import { parseCheckpoint, parseVerifierKey } from '../../../src/record/checkpoint.js';
import { leafHash, verifyConsistency, verifyInclusion } from '../../../src/record/merkle.js';
import { hashToken, tokenIdOf } from '../../../src/server/domain/tokens.js';
import { FileSignatureRecord, RECORD_FILE, RECORD_HEAD_FILE } from '../../../src/server/backends/data-dir/record-file.js';
import { migrate } from '../../../src/server/backends/postgres/migrations.js';
import { appendSignatures, PgSignatureRecord } from '../../../src/server/backends/postgres/pg-record.js';
import { readZip } from '../../../src/zip/read-zip.js';
import { freshDatabase, requireDatabase, STORE_UNDER_TEST } from '../../helpers/database.js';
import { fixture } from '../../helpers/fixtures.js';
import { api, startServer, uploadForm, waitFinished } from '../../helpers/server.js';
import { runSigngate } from '../../helpers/service-process.js';

const sha = (n: number) => createHash('sha256').update(String(n)).digest('hex');
const event = (n: number, job = 'job-1'): SignatureEvent => ({
  time: new Date(Date.UTC(2025, 0, 1, 0, 0, n)).toISOString(),
  organization: 'sandbox',
  user: 'ci',
  tokenId: 'abcdef0123456789',
  job,
  file: `Addins/F${n}.dll`,
  uploadedSha256: sha(n),
  signedSha256: sha(n + 1000),
  optionId: 12345,
  keyToken: '0123456789abcdef',
  keyLocation: '../test-keys/12345_keypair.snk',
});
const events = (from: number, count: number) => Array.from({ length: count }, (_, i) => event(from + i));

/** A data directory whose record holds `count` entries, appended three at a time. */
async function fileRecord(count = 6): Promise<{ record: FileSignatureRecord; path: string; lines: () => string[]; write: (lines: string[]) => void }> {
  const dir = mkdtempSync(join(tmpdir(), 'signgate-record-'));
  const record = new FileSignatureRecord(dir);
  for (let i = 0; i < count; i += 3) await record.append(events(i + 1, Math.min(3, count - i)));
  const path = join(dir, RECORD_FILE);
  return {
    record,
    path,
    lines: () => readFileSync(path, 'utf8').split('\n').slice(0, -1),
    write: (lines) => writeFileSync(path, lines.map((l) => `${l}\n`).join('')),
  };
}

describe('the signature record in the data directory', () => {
  test('entries are JSON lines chained by hash; the head names the last; concurrent appends of one process are serialized', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-record-'));
    const record = new FileSignatureRecord(dir);
    // Ten appends at once: one chain, sequence numbers 1..30.
    await Promise.all(Array.from({ length: 10 }, (_, i) => record.append(events(i * 3 + 1, 3))));
    const text = readFileSync(join(dir, RECORD_FILE), 'utf8');
    const lines = text
      .split('\n')
      .slice(0, -1)
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.seq)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    for (let i = 1; i < lines.length; i++) expect(lines[i].prev).toBe(lines[i - 1].hash);
    expect(lines[0].prev).toBe(EMPTY_HEAD.hash);
    expect(JSON.parse(readFileSync(join(dir, RECORD_HEAD_FILE), 'utf8'))).toEqual({ seq: 30, hash: lines[29].hash });
    // verify() reads the file a chunk at a time and keeps no entry (a record may be larger than memory).
    expect(await record.verify()).toEqual({ entries: 30, head: { seq: 30, hash: lines[29].hash } });
    if (process.platform !== 'win32') for (const name of [RECORD_FILE, RECORD_HEAD_FILE]) expect(statSync(join(dir, name)).mode & 0o077).toBe(0);
  });

  test('truncation: a cut inside the last line, and whole entries cut off the end (the head names them)', async () => {
    const r = await fileRecord(6);
    const text = readFileSync(r.path, 'utf8');
    writeFileSync(r.path, text.slice(0, text.length - 40));
    const torn = await r.record.verify();
    expect(torn.break).toMatchObject({ kind: 'truncated', line: 6, seq: 6 });
    expect(torn.break!.message).toContain('line 6, after entry 5, is incomplete');
    expect(torn.entries).toBe(5);
    r.write(r.lines().slice(0, 4));
    const cut = await r.record.verify();
    expect(cut.break).toMatchObject({ kind: 'truncated', seq: 5 });
    expect(cut.break!.message).toContain('ends at entry 4, but its head names entry 6: entries 5 to 6 were cut off');
    // Emptied altogether: still found.
    writeFileSync(r.path, '');
    expect((await r.record.verify()).break?.kind).toBe('truncated');
  });

  test('a changed byte: in a field (the hash no longer matches), in the hash, or breaking the JSON', async () => {
    const r = await fileRecord(6);
    const original = r.lines();
    r.write(original.map((l, i) => (i === 2 ? l.replace('F3.dll', 'F4.dll') : l)));
    expect((await r.record.verify()).break).toMatchObject({ kind: 'changed', line: 3, seq: 3 });
    r.write(original.map((l, i) => (i === 3 ? l.replace(/"hash":"(.)/, (_, c: string) => `"hash":"${c === 'a' ? 'b' : 'a'}`) : l)));
    expect((await r.record.verify()).break).toMatchObject({ kind: 'changed', line: 4, seq: 4 });
    r.write(original.map((l, i) => (i === 1 ? l.replace('{', '[') : l)));
    const malformed = await r.record.verify();
    expect(malformed.break).toMatchObject({ kind: 'malformed', line: 2 });
    expect(malformed.entries).toBe(1);
    // A changed entry whose hash was computed again: the next entry no longer links to it.
    const e = JSON.parse(original[2]!);
    const [forged] = chainEvents({ seq: 2, hash: e.prev }, [{ ...e, file: 'Forged.dll' }]);
    r.write(original.map((l, i) => (i === 2 ? JSON.stringify(forged) : l)));
    expect((await r.record.verify()).break).toMatchObject({ kind: 'unlinked', line: 4, seq: 4 });
  });

  test('an entry with a field no entry has is malformed, even with its hash intact', async () => {
    const r = await fileRecord(3);
    const original = r.lines();
    r.write(original.map((l, i) => (i === 1 ? l.replace('{', '{"note":"added later",') : l)));
    const extra = await r.record.verify();
    expect(extra.break).toMatchObject({ kind: 'malformed', line: 2 });
    expect(extra.break!.message).toContain('it has a field no entry has ("note")');
  });

  test('serve record verify: a head that cannot be read is a break (exit 1, as documented), naming the head', async () => {
    const r = await fileRecord(3);
    writeFileSync(join(r.record.dataDir, RECORD_HEAD_FILE), '{"seq":');
    const broken = await runSigngate(['serve', 'record', 'verify', '--data-dir', r.record.dataDir]);
    expect(broken.code, broken.err).toBe(1);
    expect(broken.out).toContain(
      `BROKEN after 0 verified entries: ${join(r.record.dataDir, RECORD_HEAD_FILE)} is not the head of a signature record (no JSON)`,
    );
  });

  test('a removed entry, and a reordered pair', async () => {
    const r = await fileRecord(6);
    const original = r.lines();
    r.write(original.filter((_, i) => i !== 2));
    const removed = await r.record.verify();
    expect(removed.break).toMatchObject({ kind: 'missing', line: 3, seq: 4 });
    expect(removed.break!.message).toContain('entry 3 is missing here (removed, or moved)');
    r.write([original[0]!, original[2]!, original[1]!, ...original.slice(3)]);
    expect((await r.record.verify()).break).toMatchObject({ kind: 'missing', line: 2, seq: 3 });
    r.write([...original.slice(0, 4), original[5]!, original[4]!]);
    expect((await r.record.verify()).break).toMatchObject({ kind: 'missing', line: 5, seq: 6 });
    // The same entry twice.
    r.write([...original.slice(0, 3), original[2]!, ...original.slice(3)]);
    expect((await r.record.verify()).break).toMatchObject({ kind: 'reordered', line: 4, seq: 3 });
  });

  test('a crash during an append leaves a torn last line: verify reports truncation; the next start moves it aside and the chain goes on', async () => {
    const r = await fileRecord(3);
    const [next] = chainEvents((await r.record.verify()).head, [event(4)]);
    appendFileSync(r.path, JSON.stringify(next).slice(0, 50));
    expect((await r.record.verify()).break).toMatchObject({ kind: 'truncated', line: 4 });
    // A whole line without its newline is no entry either: the append did not finish.
    writeFileSync(r.path, `${r.lines().join('\n')}\n${JSON.stringify(next)}`);
    expect((await r.record.verify()).break).toMatchObject({ kind: 'truncated', line: 4 });
    const restarted = new FileSignatureRecord(r.record.dataDir);
    expect(restarted.openForAppend()).toMatch(/ended in an incomplete line .* moved aside into .*signature-record\.torn-/);
    expect(readdirSync(r.record.dataDir).filter((n) => n.startsWith('signature-record.torn-')).length).toBe(1);
    expect((await restarted.verify()).entries).toBe(3);
    await restarted.append([event(5)]);
    const after = await restarted.verify();
    expect(after.break).toBeUndefined();
    expect(after.head.seq).toBe(4);
    expect(JSON.parse(r.lines()[3]!).file).toBe('Addins/F5.dll');
  });

  test('a record that ends before its head, or has entries and no head, refuses to be appended to', async () => {
    const r = await fileRecord(6);
    r.write(r.lines().slice(0, 5));
    expect(() => new FileSignatureRecord(r.record.dataDir).openForAppend()).toThrow(/ends at entry 5, but its head .* names entry 6/);
    const s = await fileRecord(3);
    writeFileSync(join(s.record.dataDir, RECORD_HEAD_FILE), ''); // not a head
    expect(() => new FileSignatureRecord(s.record.dataDir).openForAppend()).toThrow(/is not the head of a signature record/);
  });

  test('serve record verify and export on the data directory; verify --file on an export', async () => {
    const r = await fileRecord(6);
    const ok = await runSigngate(['serve', 'record', 'verify', '--data-dir', r.record.dataDir]);
    expect(ok.code, ok.err).toBe(0);
    expect(ok.out).toMatch(/signature-record\.jsonl: 6 entries, chain intact, last entry 6 \(hash [0-9a-f]{64}\)/);
    const out = join(r.record.dataDir, 'export.jsonl');
    const exported = await runSigngate(['serve', 'record', 'export', '--data-dir', r.record.dataDir, '-o', out]);
    expect(exported.code, exported.err).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(readFileSync(r.path, 'utf8'));
    expect((await runSigngate(['serve', 'record', 'verify', '--file', out])).code).toBe(0);
    r.write(r.lines().filter((_, i) => i !== 1));
    const broken = await runSigngate(['serve', 'record', 'verify', '--data-dir', r.record.dataDir]);
    expect(broken.code).toBe(1);
    expect(broken.out).toContain('BROKEN after 1 verified entry: entry 3 (line 2) follows entry 1: entry 2 is missing here (removed, or moved)');
    const refused = await runSigngate(['serve', 'record', 'export', '--data-dir', r.record.dataDir]);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain('does not verify');
  });
});

describe('signed checkpoints of the record (C2SP signed notes over its RFC 9162 Merkle tree)', () => {
  /** A data directory with `count` entries and its record key; `checkpoint()` runs serve record checkpoint. */
  async function withKey(count: number) {
    const r = await fileRecord(count);
    const key = loadRecordKey(r.record.dataDir, true);
    const checkpoint = async () => {
      const c = await runSigngate(['serve', 'record', 'checkpoint', '--data-dir', r.record.dataDir]);
      expect(c.code, c.err).toBe(0);
      const path = join(r.record.dataDir, `saved-${Math.random().toString(36).slice(2)}.checkpoint`);
      writeFileSync(path, `${c.out.trim()}\n`);
      return { text: `${c.out.trim()}\n`, path };
    };
    const verify = (...more: string[]) => runSigngate(['serve', 'record', 'verify', '--data-dir', r.record.dataDir, ...more]);
    return { ...r, key, checkpoint, verify };
  }

  test('the checkpoint is a C2SP signed note (origin, size, base64 root, blank line, — name base64(keyid||Ed25519 signature)); public-key prints the verifier key', async () => {
    const r = await withKey(6);
    const { text } = await r.checkpoint();
    const m = /^(signgate-record-[0-9a-f]{8})\n6\n([A-Za-z0-9+/]{43}=)\n\n\u2014 (signgate-record-[0-9a-f]{8}) ([A-Za-z0-9+/]+=*)\n$/.exec(text);
    expect(m, text).not.toBeNull();
    expect(m![3]).toBe(m![1]);
    // The root from the definition: leaves SHA-256(0x00 || line), nodes SHA-256(0x01 || l || r).
    const h = (...parts: Buffer[]) => createHash('sha256').update(Buffer.concat(parts)).digest();
    const leaves = r.lines().map((l) => h(Buffer.of(0), Buffer.from(l)));
    const node = (a: Buffer, b: Buffer) => h(Buffer.of(1), a, b);
    const root = node(node(node(leaves[0]!, leaves[1]!), node(leaves[2]!, leaves[3]!)), node(leaves[4]!, leaves[5]!));
    expect(m![2]).toBe(root.toString('base64'));
    // The key id and the signature, checked with node:crypto from the verifier key alone.
    const pub = await runSigngate(['serve', 'record', 'public-key', '--data-dir', r.record.dataDir]);
    expect(pub.code, pub.err).toBe(0);
    expect(pub.out.trim()).toBe(readFileSync(join(r.record.dataDir, RECORD_PUBLIC_KEY_FILE), 'utf8').trim());
    const [, name, keyId, keyB64] = /^([^+]+)\+([0-9a-f]{8})\+(.+)$/.exec(pub.out.trim())!;
    const raw = Buffer.from(keyB64!, 'base64');
    expect(raw[0]).toBe(1);
    expect(
      h(Buffer.from(`${name}\n`), Buffer.of(1), raw.subarray(1))
        .subarray(0, 4)
        .toString('hex'),
    ).toBe(keyId);
    const sig = Buffer.from(m![4]!, 'base64');
    expect(sig.subarray(0, 4).toString('hex')).toBe(keyId);
    const publicKey = createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), raw.subarray(1)]), format: 'der', type: 'spki' });
    expect(cryptoVerify(null, Buffer.from(text.slice(0, text.indexOf('\n\n') + 1)), publicKey, sig.subarray(4))).toBe(true);
    expect(readFileSync(join(r.record.dataDir, 'record-key.pem'), 'utf8')).not.toContain(keyB64!);
  });

  test('verify --checkpoint: a record that grew continues it; a rolled-back head and tail, or a chain computed again, is caught', async () => {
    const r = await withKey(6);
    const saved = await r.checkpoint();
    await r.record.append(events(7, 3));
    const grown = await r.verify('--checkpoint', saved.path);
    expect(grown.code, grown.err).toBe(0);
    expect(grown.out).toContain(`9 entries, chain intact, last entry 9`);
    expect(grown.out).toContain(`continues the checkpoint ${saved.path}`);
    const original = r.lines();
    // Rolled back: the tail cut and the head written to match, so the chain alone looks intact.
    r.write(original.slice(0, 4));
    writeFileSync(join(r.record.dataDir, RECORD_HEAD_FILE), JSON.stringify({ seq: 4, hash: JSON.parse(original[3]!).hash }));
    expect((await r.verify()).code).toBe(0);
    const rolledBack = await r.verify('--checkpoint', saved.path);
    expect(rolledBack.code).toBe(1);
    expect(rolledBack.out).toContain(
      `NOT A CONTINUATION of the checkpoint ${saved.path}: ${r.path} holds 4 entries, fewer than the 6 of the checkpoint ${saved.path}: entries were removed from its end since (rolled back or truncated)`,
    );
    // Rewritten: entry 2 changed and the whole chain and head computed again.
    const forged = chainEvents(
      EMPTY_HEAD,
      original.map((l, i) => ({ ...JSON.parse(l), ...(i === 1 ? { file: 'Forged.dll' } : {}) })),
    );
    r.write(forged.map((e) => entryLine(e).trim()));
    writeFileSync(join(r.record.dataDir, RECORD_HEAD_FILE), JSON.stringify({ seq: 9, hash: forged[8]!.hash }));
    expect((await r.verify()).code).toBe(0);
    const rewritten = await r.verify('--checkpoint', saved.path);
    expect(rewritten.code).toBe(1);
    expect(rewritten.out).toMatch(/the first 6 entries of .* hash to .*, not to the root .* of the checkpoint .*: the record was rewritten/);
  });

  test('a checkpoint signed by another key, or changed after signing, is refused naming the keys; an export is checked with --public-key', async () => {
    const r = await withKey(3);
    const other = await withKey(3);
    const foreign = await other.checkpoint();
    const refused = await r.verify('--checkpoint', foreign.path);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain(
      `${foreign.path} is not signed by the record key ${r.key.verifier.name} (key id ${r.key.verifier.keyId.toString('hex')}); it is signed by ${other.key.verifier.name} (key id ${other.key.verifier.keyId.toString('hex')})`,
    );
    const saved = await r.checkpoint();
    writeFileSync(saved.path, saved.text.replace(/\n3\n/, '\n2\n'));
    const changed = await r.verify('--checkpoint', saved.path);
    expect(changed.code).toBe(2);
    expect(changed.err).toContain('does not verify: the checkpoint was changed after it was signed');
    writeFileSync(saved.path, saved.text);
    const out = join(r.record.dataDir, 'export.jsonl');
    expect((await runSigngate(['serve', 'record', 'export', '--data-dir', r.record.dataDir, '-o', out])).code).toBe(0);
    const noKey = await runSigngate(['serve', 'record', 'verify', '--file', out, '--checkpoint', saved.path]);
    expect(noKey.code).toBe(2);
    expect(noKey.err).toContain('--checkpoint with --file needs --public-key');
    const ok = await runSigngate([
      'serve',
      'record',
      'verify',
      '--file',
      out,
      '--checkpoint',
      saved.path,
      '--public-key',
      join(r.record.dataDir, RECORD_PUBLIC_KEY_FILE),
    ]);
    expect(ok.code, ok.err).toBe(0);
    writeFileSync(out, readFileSync(out, 'utf8').split('\n').slice(0, 2).join('\n') + '\n');
    const cut = await runSigngate([
      'serve',
      'record',
      'verify',
      '--file',
      out,
      '--checkpoint',
      saved.path,
      '--public-key',
      readFileSync(join(r.record.dataDir, RECORD_PUBLIC_KEY_FILE), 'utf8').trim(),
    ]);
    expect(cut.code).toBe(1);
    expect(cut.out).toContain('holds 2 entries, fewer than the 3 of the checkpoint');
  });
});

describe('the service appends an entry for every file it signs', () => {
  test('entry per signed file: job, user, token id (never the token), both SHA-256, key token and location; nothing for files it did not sign', async () => {
    const server = await startServer();
    try {
      const token = server.token();
      const bytes = fixture('findings/passing/FindingAddin.dll');
      const files = [
        { name: 'FindingAddin.dll', bytes },
        { name: 'Sub/Copy.dll', bytes },
        { name: 'Wrong.dll', bytes: fixture('findings/wrong-key/FindingAddin.dll') },
      ];
      const { id } = await (await api(server, '/assemblies', token, { method: 'POST', body: uploadForm(files) })).json();
      const status = await waitFinished(server, token, id);
      expect(status.assemblies.map((a: { fileProcessingState: string }) => a.fileProcessingState)).toEqual(['Signed', 'Signed', 'Error']);
      const zip = await readZip(new Uint8Array(await (await api(server, `/assemblies/${id}`, token)).arrayBuffer()));
      const returned = (name: string) =>
        createHash('sha256')
          .update(zip.find((e) => e.name === name)!.bytes)
          .digest('hex');
      const lines: string[] = [];
      const count = await server.app.signgate.store.signatures.exportTo((l) => void lines.push(l));
      expect(count).toBe(2);
      const entries = verifyRecordText(lines.join('')).entryList;
      expect(entries.map((e) => e.file)).toEqual(['FindingAddin.dll', 'Sub/Copy.dll']);
      expect(entries[0]).toMatchObject({
        seq: 1,
        organization: 'sandbox',
        user: 'ci',
        tokenId: tokenIdOf(hashToken(token)),
        job: id,
        uploadedSha256: createHash('sha256').update(bytes).digest('hex'),
        signedSha256: returned('FindingAddin.dll'),
        optionId: 12345,
        keyToken: status.assemblies[0].messages.find((m: { message: string }) => m.message.includes('key token')).message.match(/key token ([0-9a-f]{16})/)[1],
        keyLocation: '../test-keys/12345_keypair.snk',
      });
      expect(entries[1]!.signedSha256).toBe(returned('Sub/Copy.dll'));
      expect(lines.join('')).not.toContain(token);
      expect(lines.join('')).not.toContain(token.slice(4, 20));
      expect(await server.app.signgate.store.signatures.verify()).toMatchObject({ entries: 2 });
      expect(server.app.signgate.store.signatures.where).toMatch(STORE_UNDER_TEST === 'postgres' ? /^postgres:\/\// : /signature-record\.jsonl$/);
    } finally {
      await server.close();
    }
  });
});

describe("a finished job's status carries its entries with inclusion proofs in a signed checkpoint; GET /record/consistency proves the next one continues it", () => {
  test("inclusion per entry, a checkpoint signed by the key of GET /record/public-key, consistency between two jobs' checkpoints", async () => {
    const server = await startServer();
    try {
      const token = server.token();
      const bytes = fixture('findings/passing/FindingAddin.dll');
      const sign = async (names: string[]) => {
        const { id } = await (await api(server, '/assemblies', token, { method: 'POST', body: uploadForm(names.map((name) => ({ name, bytes }))) })).json();
        await waitFinished(server, token, id);
        const status = await (await api(server, `/assemblies/${id}/status`, token)).json();
        const zip = await readZip(new Uint8Array(await (await api(server, `/assemblies/${id}`, token)).arrayBuffer()));
        return { id, status, zip };
      };
      const { publicKey } = await (await api(server, '/record/public-key', token)).json();
      const verifier = parseVerifierKey(publicKey, 'GET /record/public-key');
      const first = await sign(['A.dll', 'Sub/B.dll']);
      const proof1 = first.status.signatureRecord;
      expect(proof1.entries.map((e: { entry: { file: string } }) => e.entry.file)).toEqual(['A.dll', 'Sub/B.dll']);
      const cp1 = parseCheckpoint(proof1.checkpoint, verifier, 'the status');
      for (const { entry, leafIndex, inclusionProof } of proof1.entries) {
        expect(entry.job).toBe(first.id);
        expect(entry.signedSha256).toBe(
          createHash('sha256')
            .update(first.zip.find((z) => z.name === entry.file)!.bytes)
            .digest('hex'),
        );
        const leaf = leafHash(Buffer.from(JSON.stringify(entry)));
        expect(
          verifyInclusion(
            leaf,
            leafIndex,
            cp1.size,
            inclusionProof.map((p: string) => Buffer.from(p, 'base64')),
            cp1.root,
          ),
        ).toBe(true);
        expect(verifyInclusion(leaf, leafIndex, cp1.size, inclusionProof.map((p: string) => Buffer.from(p, 'base64')).reverse(), cp1.root)).toBe(
          inclusionProof.length < 2,
        );
      }
      const second = await sign(['C.dll', 'D.dll', 'E.dll']);
      const cp2 = parseCheckpoint(second.status.signatureRecord.checkpoint, verifier, 'the status');
      expect(cp2.size).toBe(cp1.size + 3);
      const consistency = await (await api(server, `/record/consistency?from=${cp1.size}&to=${cp2.size}`, token)).json();
      const hashes = consistency.proof.map((p: string) => Buffer.from(p, 'base64'));
      expect(verifyConsistency(cp1.size, cp2.size, cp1.root, cp2.root, hashes)).toBe(true);
      expect(verifyConsistency(cp1.size, cp2.size, Buffer.alloc(32), cp2.root, hashes)).toBe(false);
      const latest = await (await api(server, '/record/checkpoint', token)).json();
      expect(latest.size).toBe(cp2.size);
      expect(parseCheckpoint(latest.checkpoint, verifier, 'GET /record/checkpoint').root.equals(cp2.root)).toBe(true);
      const beyond = await api(server, `/record/consistency?from=1&to=${cp2.size + 5}`, token);
      expect(beyond.status).toBe(400);
      expect((await beyond.json()).detail).toContain(`the record holds ${cp2.size}`);
      // A job with nothing signed carries no signatureRecord.
      const { id } = await (
        await api(server, '/assemblies', token, {
          method: 'POST',
          body: uploadForm([{ name: 'Wrong.dll', bytes: fixture('findings/wrong-key/FindingAddin.dll') }]),
        })
      ).json();
      expect((await waitFinished(server, token, id)) as object).not.toHaveProperty('signatureRecord');
    } finally {
      await server.close();
    }
  });
});

describe.skipIf(!requireDatabase())('the signature record in PostgreSQL', () => {
  async function pgRecord(count: number): Promise<{ pool: pg.Pool; record: PgSignatureRecord }> {
    const pool = new pg.Pool({ connectionString: await freshDatabase(), max: 12 });
    await migrate(pool);
    const record = new PgSignatureRecord(pool, 'the test database');
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await appendSignatures(client, events(1, count));
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    return { pool, record };
  }

  test('a changed row, a removed row (in the middle and at the end), reordered rows', async () => {
    const { pool, record } = await pgRecord(6);
    try {
      expect(await record.verify()).toMatchObject({ entries: 6, head: { seq: 6 } });
      await pool.query(`UPDATE signgate_signatures SET file_name = 'Forged.dll' WHERE seq = 3`);
      expect((await record.verify()).break).toMatchObject({ kind: 'changed', seq: 3, line: null });
      await pool.query(`UPDATE signgate_signatures SET file_name = 'Addins/F3.dll' WHERE seq = 3`);
      await pool.query(`UPDATE signgate_signatures SET signed_sha256 = $1 WHERE seq = 5`, [sha(1)]);
      expect((await record.verify()).break).toMatchObject({ kind: 'changed', seq: 5 });
      await pool.query(`UPDATE signgate_signatures SET signed_sha256 = $1 WHERE seq = 5`, [sha(1005)]);
      expect((await record.verify()).break).toBeUndefined();
      // Reordered: rows 2 and 3 swap places (their sequence numbers).
      await pool.query('BEGIN');
      await pool.query('UPDATE signgate_signatures SET seq = -2 WHERE seq = 2');
      await pool.query('UPDATE signgate_signatures SET seq = 2 WHERE seq = 3');
      await pool.query('UPDATE signgate_signatures SET seq = 3 WHERE seq = -2');
      await pool.query('COMMIT');
      expect((await record.verify()).break).toMatchObject({ kind: 'changed', seq: 2 });
      await pool.query('BEGIN');
      await pool.query('UPDATE signgate_signatures SET seq = -2 WHERE seq = 2');
      await pool.query('UPDATE signgate_signatures SET seq = 2 WHERE seq = 3');
      await pool.query('UPDATE signgate_signatures SET seq = 3 WHERE seq = -2');
      await pool.query('COMMIT');
      expect((await record.verify()).break).toBeUndefined();
      // Reordered with their sequence numbers and hashes computed again: the links break.
      const rows = (await pool.query('SELECT * FROM signgate_signatures ORDER BY seq')).rows;
      const [r2, r3] = [rows[1], rows[2]];
      const swapped = chainEvents(
        { seq: 1, hash: rows[0].hash },
        [3, 2].map((n) => event(n)),
      );
      await pool.query(
        'UPDATE signgate_signatures SET file_name = $2, uploaded_sha256 = $3, signed_sha256 = $4, time = $5, prev_hash = $6, hash = $7 WHERE seq = $1',
        [2, swapped[0]!.file, swapped[0]!.uploadedSha256, swapped[0]!.signedSha256, swapped[0]!.time, swapped[0]!.prev, swapped[0]!.hash],
      );
      await pool.query(
        'UPDATE signgate_signatures SET file_name = $2, uploaded_sha256 = $3, signed_sha256 = $4, time = $5, prev_hash = $6, hash = $7 WHERE seq = $1',
        [3, swapped[1]!.file, swapped[1]!.uploadedSha256, swapped[1]!.signedSha256, swapped[1]!.time, swapped[1]!.prev, swapped[1]!.hash],
      );
      expect((await record.verify()).break).toMatchObject({ kind: 'unlinked', seq: 4 });
      for (const r of [r2, r3])
        await pool.query(
          'UPDATE signgate_signatures SET file_name = $2, uploaded_sha256 = $3, signed_sha256 = $4, time = $5, prev_hash = $6, hash = $7 WHERE seq = $1',
          [r.seq, r.file_name, r.uploaded_sha256, r.signed_sha256, r.time, r.prev_hash, r.hash],
        );
      expect((await record.verify()).break).toBeUndefined();
      // Removed rows: in the middle, and the last one (the head still names it).
      await pool.query('DELETE FROM signgate_signatures WHERE seq = 6');
      expect((await record.verify()).break).toMatchObject({ kind: 'truncated', seq: 6 });
      await pool.query('DELETE FROM signgate_signatures WHERE seq = 4');
      const removed = await record.verify();
      expect(removed.break).toMatchObject({ kind: 'missing', seq: 5 });
      expect(removed.break!.message).toContain('entry 4 is missing here');
    } finally {
      await pool.end();
    }
  });

  test('appends from 8 connections at once, 25 times each: one chain, sequence numbers without gaps, no fork', async () => {
    const { pool, record } = await pgRecord(0);
    try {
      await Promise.all(
        Array.from({ length: 8 }, async (_, worker) => {
          for (let i = 0; i < 25; i++) {
            const client = await pool.connect();
            try {
              await client.query('BEGIN');
              await appendSignatures(client, [event(worker * 100 + i, `job-${worker}`), event(worker * 100 + i + 50, `job-${worker}`)]);
              await client.query('COMMIT');
            } finally {
              client.release();
            }
          }
        }),
      );
      const rows = (await pool.query('SELECT seq::int, prev_hash, hash FROM signgate_signatures ORDER BY seq')).rows;
      expect(rows.map((r) => r.seq)).toEqual(Array.from({ length: 400 }, (_, i) => i + 1));
      expect(new Set(rows.map((r) => r.prev_hash)).size).toBe(400); // no two entries link to the same one: no fork
      expect(await record.verify()).toMatchObject({ entries: 400, head: { seq: 400 } });
    } finally {
      await pool.end();
    }
  });
});
