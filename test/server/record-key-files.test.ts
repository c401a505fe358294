// The record key's two files: record-key.pem (the private key) and record-key.pub (its verifier key, which
// auditors are handed). Only the service's start that makes the key writes the .pub (and a start that finds a .pem
// copied in without one); `serve record public-key` and `serve record checkpoint` only read: with no .pub they
// write none, and a .pub that disagrees with the .pem is refused by them and by a start, naming both files and
// what to do, and left as it is.
import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { formatVerifierKey, verifierOf } from '../../src/record/checkpoint.js';
import { RECORD_KEY_FILE, RECORD_PUBLIC_KEY_FILE } from '../../src/server/record-key.js';
import { runSigngate, sandboxConfigCopy, startServiceProcess, stopServiceProcess } from '../helpers/service-process.js';

/** A data directory holding a record key (its .pem), and the verifier key text of that key. */
function dataDirWithKey(): { dataDir: string; pem: string; pub: string; verifierKey: string } {
  const dataDir = mkdtempSync(join(tmpdir(), 'signgate-record-key-'));
  const { privateKey } = generateKeyPairSync('ed25519');
  const pem = join(dataDir, RECORD_KEY_FILE);
  writeFileSync(pem, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  return { dataDir, pem, pub: join(dataDir, RECORD_PUBLIC_KEY_FILE), verifierKey: formatVerifierKey(verifierOf(privateKey)) };
}

/** The verifier key of another record key. */
const otherKey = () => formatVerifierKey(verifierOf(generateKeyPairSync('ed25519').privateKey));

/** Writes `text` as the .pub, dated an hour back (a write would show in its time). */
function writeOldPub(path: string, text: string): { bytes: Buffer; mtimeMs: number } {
  writeFileSync(path, text);
  const hourAgo = new Date(Date.now() - 3600_000);
  utimesSync(path, hourAgo, hourAgo);
  return { bytes: readFileSync(path), mtimeMs: statSync(path).mtimeMs };
}

describe('record-key.pub is written only by the start that makes the key', () => {
  test('serve record public-key and checkpoint with a .pub of another key: refused, naming both files, the .pub left as it is', async () => {
    const k = dataDirWithKey();
    const stranger = otherKey();
    const before = writeOldPub(k.pub, `${stranger}\n`);
    for (const command of ['public-key', 'checkpoint']) {
      const r = await runSigngate(['serve', 'record', command, '--data-dir', k.dataDir]);
      expect(r.code, `${command}: ${r.err}`).toBe(2);
      expect(r.out).toBe('');
      expect(r.err).toContain(`${k.pub} does not match ${k.pem}: it is the record key ${stranger.split('+')[0]} (key id ${stranger.split('+')[1]})`);
      expect(r.err).toContain(`${k.pem} is the key ${k.verifierKey.split('+')[0]} (key id ${k.verifierKey.split('+')[1]})`);
      expect(r.err).toMatch(/move .*record-key\.pub aside/);
      expect(r.err).not.toMatch(/\n\s+at /);
      expect(readFileSync(k.pub).equals(before.bytes)).toBe(true);
      expect(statSync(k.pub).mtimeMs).toBe(before.mtimeMs);
    }
    // A .pub that is no key at all: the same.
    writeOldPub(k.pub, 'not a key\n');
    const r = await runSigngate(['serve', 'record', 'public-key', '--data-dir', k.dataDir]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${k.pub} does not match ${k.pem}: it is not a record public key`);
    expect(readFileSync(k.pub, 'utf8')).toBe('not a key\n');
  });

  test('serve record public-key and checkpoint with no .pub: they print from the .pem and write nothing; with a matching one, nothing either', async () => {
    const k = dataDirWithKey();
    const printed = await runSigngate(['serve', 'record', 'public-key', '--data-dir', k.dataDir]);
    expect(printed.code, printed.err).toBe(0);
    expect(printed.out.trim()).toBe(k.verifierKey);
    const checkpoint = await runSigngate(['serve', 'record', 'checkpoint', '--data-dir', k.dataDir]);
    expect(checkpoint.code, checkpoint.err).toBe(0);
    expect(checkpoint.out).toMatch(new RegExp(`^${k.verifierKey.split('+')[0]}\\n0\\n`));
    expect(existsSync(k.pub)).toBe(false);
    const before = writeOldPub(k.pub, `${k.verifierKey}\r\n`);
    expect((await runSigngate(['serve', 'record', 'public-key', '--data-dir', k.dataDir])).code).toBe(0);
    expect(readFileSync(k.pub).equals(before.bytes)).toBe(true);
    expect(statSync(k.pub).mtimeMs).toBe(before.mtimeMs);
  });

  test("the service: its first start makes both files; one with a .pem copied in writes the .pub; one with another key's .pub is refused", async () => {
    const config = sandboxConfigCopy();
    const fresh = mkdtempSync(join(tmpdir(), 'signgate-record-key-'));
    const first = await startServiceProcess(['--config', config, '--data-dir', fresh]);
    await stopServiceProcess(first);
    const printed = await runSigngate(['serve', 'record', 'public-key', '--data-dir', fresh]);
    expect(readFileSync(join(fresh, RECORD_PUBLIC_KEY_FILE), 'utf8')).toBe(printed.out);
    const copied = dataDirWithKey();
    const node = await startServiceProcess(['--config', config, '--data-dir', copied.dataDir]);
    await stopServiceProcess(node);
    expect(readFileSync(copied.pub, 'utf8')).toBe(`${copied.verifierKey}\n`);
    const before = writeOldPub(copied.pub, `${otherKey()}\n`);
    const refused = await startServiceProcess(['--config', config, '--data-dir', copied.dataDir]).then(
      async (started) => {
        await stopServiceProcess(started);
        return 'it started';
      },
      (error: Error) => error.message,
    );
    expect(refused).toContain('the process ended (2)');
    expect(refused).toContain(`${copied.pub} does not match ${copied.pem}`);
    expect(readFileSync(copied.pub).equals(before.bytes)).toBe(true);
  });
});

describe.skipIf(process.platform === 'win32')('a record key others on this machine may read', () => {
  /** The warning lines about the record key in the log of a service started on `args` and stopped. */
  async function recordKeyWarnings(args: string[]): Promise<{ level: number; msg: string; recordKey?: string; mode?: string }[]> {
    const service = await startServiceProcess(['--config', sandboxConfigCopy(), ...args]);
    await stopServiceProcess(service, 'SIGTERM');
    return service
      .stdout()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { level: number; msg: string; recordKey?: string; mode?: string })
      .filter((l) => l.recordKey !== undefined);
  }

  test("is a warning at start, as a key pair is: the data directory's (0644) and the one --record-key names; none at 0600", async () => {
    const k = dataDirWithKey();
    chmodSync(k.pem, 0o644);
    const inDataDir = await recordKeyWarnings(['--data-dir', k.dataDir]);
    expect(inDataDir).toEqual([expect.objectContaining({ level: 40, recordKey: k.pem, mode: '0644' })]);
    expect(inDataDir[0]!.msg).toBe(
      `the record key ${k.pem} is readable by other users of this machine (mode 0644); anyone who can read it can sign checkpoints of the service's record as the service: chmod 600 it (or restrict its ACL)`,
    );
    const named = join(mkdtempSync(join(tmpdir(), 'signgate-record-key-named-')), 'deployment.pem');
    copyFileSync(k.pem, named);
    chmodSync(named, 0o640);
    const empty = mkdtempSync(join(tmpdir(), 'signgate-record-key-'));
    expect(await recordKeyWarnings(['--data-dir', empty, '--record-key', named])).toEqual([
      expect.objectContaining({
        level: 40,
        recordKey: named,
        mode: '0640',
        msg: expect.stringContaining(`the record key ${named} is readable by other users`),
      }),
    ]);
    chmodSync(named, 0o600);
    expect(await recordKeyWarnings(['--data-dir', empty, '--record-key', named])).toEqual([]);
  });
});
