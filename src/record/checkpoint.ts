// Signed checkpoints of the signature record, in the C2SP formats that transparency logs share (Go's checksum
// database, Sigstore, the CT static logs): the record is a Merkle tree (record/merkle.ts) whose leaves are the entries'
// lines (without the newline); a checkpoint names the tree's size and root hash, and the service signs it as a
// C2SP signed note with its record key (Ed25519):
//
//   signgate-record-1a2b3c4d            origin: names the record (here: after its key)
//   1234                                tree size: entries 1 to 1234
//   3q1Nw…=                             root hash, base64
//                                       blank line
//   — signgate-record-1a2b3c4d AbCd…=   signature line: key name, base64(key id (4 bytes) || Ed25519 signature)
//
// The signature covers the text up to the blank line; the key id is the first 4 bytes of SHA-256(name || 0x0A ||
// 0x01 || public key) (0x01: Ed25519). The public key travels as a C2SP verifier key: name+keyid(hex)+base64(0x01 ||
// public key). Whoever saved a checkpoint can later ask for a consistency proof and find any rollback or rewrite.
import { createHash, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { UsageError } from '../core/errors.js';
import { leafHash, type Hash } from './merkle.js';
import { entryLine, type SignatureEntry } from './signature-record.js';

/** The leaf of an entry in the record's Merkle tree: its line without the newline. */
export function entryLeaf(entry: SignatureEntry): Hash {
  return leafHash(Buffer.from(entryLine(entry).slice(0, -1), 'utf8'));
}

/** A tree head: how many entries and the root hash over them. */
export interface TreeHead {
  readonly size: number;
  readonly root: Hash;
}

/** A checkpoint read from its text, its signature verified. */
export interface Checkpoint extends TreeHead {
  readonly origin: string;
  /** The checkpoint as signed (the note's text, signature lines included). */
  readonly text: string;
}

/** A record key's public half as verifiers use it. */
export interface RecordVerifier {
  readonly name: string;
  readonly keyId: Buffer;
  /** The raw 32-byte Ed25519 public key. */
  readonly publicKey: Buffer;
}

const ED25519 = 0x01;
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** The raw 32 bytes of an Ed25519 public key. */
export function rawPublicKey(key: KeyObject): Buffer {
  const der = key.export({ type: 'spki', format: 'der' });
  return Buffer.from(der.subarray(der.length - 32));
}

/** The C2SP key id: the first 4 bytes of SHA-256(name || "\n" || 0x01 || public key). */
export function noteKeyId(name: string, publicKey: Buffer): Buffer {
  return createHash('sha256').update(`${name}\n`).update(Buffer.of(ED25519)).update(publicKey).digest().subarray(0, 4);
}

/** The default name of a record key (and origin of its checkpoints): signgate-record- and 8 hex digits of the key's SHA-256. */
export function recordKeyName(publicKey: Buffer): string {
  return `signgate-record-${createHash('sha256').update(publicKey).digest('hex').slice(0, 8)}`;
}

/** The verifier of a private record key. */
export function verifierOf(privateKey: KeyObject, name?: string): RecordVerifier {
  const publicKey = rawPublicKey(createPublicKey(privateKey));
  const n = name ?? recordKeyName(publicKey);
  return { name: n, keyId: noteKeyId(n, publicKey), publicKey };
}

/** The C2SP verifier key text: name+keyid+base64(0x01 || public key). */
export function formatVerifierKey(v: RecordVerifier): string {
  return `${v.name}+${v.keyId.toString('hex')}+${Buffer.concat([Buffer.of(ED25519), v.publicKey]).toString('base64')}`;
}

/**
 * Reads a verifier key (`where` names it in errors).
 * @throws UsageError when it is not one of an Ed25519 key
 */
export function parseVerifierKey(text: string, where: string): RecordVerifier {
  const m = /^([^\s+]+)\+([0-9a-f]{8})\+([A-Za-z0-9+/]+=*)$/.exec(text.trim());
  const hint = 'Pass the record key as `signgate serve record public-key` prints it (name+keyid+key).';
  if (!m) throw new UsageError(`${where} is not a record public key (expected name+keyid+base64 key, one line)`, hint);
  const key = Buffer.from(m[3]!, 'base64');
  if (key.length !== 33 || key[0] !== ED25519)
    throw new UsageError(`${where} is not an Ed25519 record public key (its key is ${key.length} bytes of type ${key[0]})`, hint);
  const v: RecordVerifier = { name: m[1]!, keyId: Buffer.from(m[2]!, 'hex'), publicKey: key.subarray(1) };
  if (!noteKeyId(v.name, v.publicKey).equals(v.keyId))
    throw new UsageError(`${where}: the key id ${m[2]} does not belong to the key and name it is given with`, hint);
  return v;
}

/** The checkpoint's body: origin, size, base64 root, each with its newline. */
function body(origin: string, head: TreeHead): string {
  return `${origin}\n${head.size}\n${head.root.toString('base64')}\n`;
}

/** A signed checkpoint of `head`, its origin the key's name. */
export function signCheckpoint(head: TreeHead, privateKey: KeyObject, name?: string): string {
  const v = verifierOf(privateKey, name);
  const text = body(v.name, head);
  const signature = sign(null, Buffer.from(text, 'utf8'), privateKey);
  return `${text}\n\u2014 ${v.name} ${Buffer.concat([v.keyId, signature]).toString('base64')}\n`;
}

/** An Ed25519 private key from PEM (PKCS#8). */
export function recordPrivateKey(pem: string | Buffer): KeyObject {
  return createPrivateKey(pem);
}

/** The most bytes a checkpoint may have: its body and up to MAX_CHECKPOINT_SIGNATURES signature lines fit in it. */
export const MAX_CHECKPOINT_BYTES = 16 * 1024;
/** The most signature lines a note may carry (as Go's golang.org/x/mod/sumdb/note reads one). */
export const MAX_CHECKPOINT_SIGNATURES = 100;

/** A signature line of a note: its key's name and key id, as written (unverified). */
export interface NoteSigner {
  readonly name: string;
  readonly keyId: Buffer;
}

const SIGNATURE_LINE = /^\u2014 ([^\s+]+) ((?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?)$/;

/**
 * Splits a signed note as C2SP signed-note says (and Go's note.Open reads it): UTF-8 text with no control character
 * but newline, the signed text up to the last blank line, then one or more signature lines, each ending in a newline.
 * @throws UsageError naming what is not so
 */
function splitNote(text: string, where: string, hint: string): { signed: string; signatures: { name: string; keyId: Buffer; signature: Buffer }[] } {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_CHECKPOINT_BYTES)
    throw new UsageError(`${where} is ${bytes} bytes, more than a checkpoint has (at most ${MAX_CHECKPOINT_BYTES}); it was not read`, hint);
  const control = /[\u0000-\u0009\u000b-\u001f\u007f]/.exec(text);
  if (control) {
    const code = control[0].charCodeAt(0).toString(16).padStart(4, '0').toUpperCase();
    const crlf = control[0] === '\r' ? ' (a copy with Windows line ends? a checkpoint is signed with \\n line ends only)' : '';
    throw new UsageError(
      `${where} is not a signed note: it holds the control character U+${code} at offset ${control.index}${crlf}; a note allows none but newline`,
      hint,
    );
  }
  if (/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text))
    throw new UsageError(`${where} is not a signed note: it is not valid UTF-8 text`, hint);
  const split = text.lastIndexOf('\n\n');
  if (split < 0) throw new UsageError(`${where} is not a signed checkpoint: it has no blank line before its signatures`, hint);
  const block = text.slice(split + 2);
  if (block === '' || !block.endsWith('\n'))
    throw new UsageError(
      `${where} is not a signed note: ${block === '' ? 'no signature line follows its blank line' : 'its last signature line has no newline'}`,
      hint,
    );
  const lines = block.slice(0, -1).split('\n');
  if (lines.length > MAX_CHECKPOINT_SIGNATURES)
    throw new UsageError(`${where} carries ${lines.length} signature lines, more than the ${MAX_CHECKPOINT_SIGNATURES} a note may have`, hint);
  const signatures = lines.map((line) => {
    const m = SIGNATURE_LINE.exec(line);
    const raw = m ? Buffer.from(m[2]!, 'base64') : undefined;
    if (!m || !raw || raw.length < 5)
      throw new UsageError(`${where}: "${line.slice(0, 80)}" is not a signature line (— name base64, the key id and a signature)`, hint);
    return { name: m[1]!, keyId: raw.subarray(0, 4), signature: raw.subarray(4) };
  });
  return { signed: text.slice(0, split + 1), signatures };
}

/**
 * The keys that signed a note, as its signature lines name them (unverified): to tell a checkpoint of another
 * record key from a forged one. Empty for text that is not a signed note.
 */
export function noteSigners(text: string): NoteSigner[] {
  try {
    return splitNote(text, 'the note', '').signatures.map(({ name, keyId }) => ({ name, keyId }));
  } catch {
    return [];
  }
}

/**
 * Reads a checkpoint and checks its signature by `verifier` (`where` names it in errors), as strictly as the format
 * says: at most MAX_CHECKPOINT_BYTES, no control character but newline, the signatures after the last blank line,
 * one signature line by the verifier's key (a second one is refused), at most 100 signature lines, and the origin
 * line is the key's name (a record's checkpoints are named after its key).
 * @throws UsageError naming what is wrong: not a checkpoint, no signature of that key (naming the keys that did sign),
 * a signature that does not verify, another origin
 */
export function parseCheckpoint(text: string, verifier: RecordVerifier, where: string): Checkpoint {
  const hint = "Pass a checkpoint as the service signed it (signgate serve record checkpoint, or the one a job's status carried), unchanged.";
  const { signed, signatures } = splitNote(text, where, hint);
  const lines = signed.split('\n').slice(0, -1);
  if (lines.length < 3 || !/^(0|[1-9][0-9]*)$/.test(lines[1]!) || !/^[A-Za-z0-9+/]{43}=$/.test(lines[2]!)) {
    throw new UsageError(`${where} is not a checkpoint: it needs an origin line, a tree size and a base64 SHA-256 root hash`, hint);
  }
  const size = Number(lines[1]);
  if (!Number.isSafeInteger(size)) throw new UsageError(`${where}: the tree size ${lines[1]} is too large`, hint);
  const mine = signatures.filter((s) => s.name === verifier.name && s.keyId.equals(verifier.keyId));
  if (mine.length === 0) {
    const found = signatures.map((s) => `${s.name} (key id ${s.keyId.toString('hex')})`);
    throw new UsageError(
      `${where} is not signed by the record key ${verifier.name} (key id ${verifier.keyId.toString('hex')}); it is signed by ${found.join(', ') || 'no key'}`,
      "Check that it is a checkpoint of this service, and that the record key you pass is the service's (signgate serve record public-key).",
    );
  }
  if (mine.length > 1) throw new UsageError(`${where} carries ${mine.length} signature lines by the record key ${verifier.name}; a checkpoint has one`, hint);
  const publicKey = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, verifier.publicKey]), format: 'der', type: 'spki' });
  if (!verify(null, Buffer.from(signed, 'utf8'), publicKey, mine[0]!.signature)) {
    throw new UsageError(`${where}: the signature of ${verifier.name} does not verify: the checkpoint was changed after it was signed`, hint);
  }
  if (lines[0] !== verifier.name) {
    throw new UsageError(
      `${where} names the record "${lines[0]!.slice(0, 80)}", not "${verifier.name}", the name of the key that signed it; a record's checkpoints carry its key's name`,
      hint,
    );
  }
  return { origin: lines[0]!, size, root: Buffer.from(lines[2]!, 'base64'), text };
}

/**
 * A record public key given as the verifier key's text itself, or as a file that `readText` reads (the caller's
 * file system: workflows/keys.ts, server/record-key.ts).
 */
export function recordPublicKey(fileOrKey: string, readText: (file: string) => string): RecordVerifier {
  if (/^[^\s+/\\]+\+[0-9a-f]{8}\+/.test(fileOrKey)) return parseVerifierKey(fileOrKey, 'the record public key');
  let text: string;
  try {
    text = readText(fileOrKey);
  } catch (error) {
    const unreadable = new UsageError(
      `cannot read the record public key ${fileOrKey}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      "Pass the file record-key.pub of the service's data directory, or the line `signgate serve record public-key` prints.",
    );
    // The file it is about: in a build, the error list shows it there.
    unreadable.file = fileOrKey;
    throw unreadable;
  }
  return parseVerifierKey(text, fileOrKey);
}
