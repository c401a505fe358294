// parseCheckpoint reads a checkpoint as strictly as C2SP signed-note and Go's note.Open do (test/record/go-sumdb.test.ts
// holds the two side by side in the heavy leg): these are the shapes a lenient parser accepted.
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { MAX_CHECKPOINT_BYTES, noteKeyId, parseCheckpoint, signCheckpoint, verifierOf } from '../../src/record/checkpoint.js';

const { privateKey } = generateKeyPairSync('ed25519');
const verifier = verifierOf(privateKey);
const head = { size: 7, root: createHash('sha256').update('root').digest() };
const good = signCheckpoint(head, privateKey);
const [body, sigLine] = [good.slice(0, good.lastIndexOf('\n\n') + 1), good.slice(good.lastIndexOf('\n\n') + 2)];
const parse = (text: string) => () => parseCheckpoint(text, verifier, 'the checkpoint');
/** A signature line by our key over `text` (its id and an Ed25519 signature). */
const lineFor = (text: string, name = verifier.name) =>
  `\u2014 ${name} ${Buffer.concat([noteKeyId(name, verifier.publicKey), sign(null, Buffer.from(text), privateKey)]).toString('base64')}\n`;
const other = verifierOf(generateKeyPairSync('ed25519').privateKey);
const otherLine = `\u2014 ${other.name} ${Buffer.concat([other.keyId, Buffer.alloc(64, 1)]).toString('base64')}\n`;

test('a checkpoint as signed is read: origin, size, root', () => {
  expect(parse(good)()).toMatchObject({ origin: verifier.name, size: 7, root: head.root, text: good });
});

describe('refused', () => {
  test.each([
    ['a CRLF copy', good.replace(/\n/g, '\r\n'), /control character U\+000D .*Windows line ends/],
    ['a tab in the text', good.replace('\n7\n', '\n7\t\n'), /control character U\+0009/],
    [
      'a bad line by the key, then a good one',
      `${body}\n${sigLine.replace(/[A-Za-z](?==?\n$)/, (c) => (c === 'A' ? 'B' : 'A'))}${sigLine}`,
      /2 signature lines by the record key/,
    ],
    ['the good line twice', `${good}${sigLine}`, /2 signature lines by the record key/],
    ['101 signature lines', `${good}${otherLine.repeat(100)}`, /101 signature lines, more than the 100/],
    ['a blank line among the signatures (the text then ends at the last blank line)', `${body}\n${sigLine}\n${otherLine}`, /not signed by the record key/],
    ['no newline after the last signature', good.slice(0, -1), /last signature line has no newline/],
    ['more than a checkpoint has', `${good}${'x'.repeat(MAX_CHECKPOINT_BYTES)}\n`, /bytes, more than a checkpoint has/],
  ])('%s', (_name, text, message) => {
    expect(parse(text)).toThrow(message);
  });

  test('another origin than the key name, though signed by the key', () => {
    const text = `elsewhere\n7\n${head.root.toString('base64')}\n`;
    expect(parse(`${text}\n${lineFor(text)}`)).toThrow(/names the record "elsewhere", not "signgate-record-/);
  });

  test('a signature line by another key only: names the keys that did sign', () => {
    expect(parse(`${body}\n${otherLine}`)).toThrow(`it is signed by ${other.name} (key id ${other.keyId.toString('hex')})`);
  });
});

test('a line by another key beside ours is no reason to refuse (a witness may cosign)', () => {
  expect(parse(`${good}${otherLine}`)().size).toBe(7);
});
