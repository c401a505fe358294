// Files as the Windows tools write them, byte for byte: Windows PowerShell 5.1's `$t > token.txt` and `Out-File`
// (UTF-16LE with a byte-order mark and CRLF), `Out-File -Encoding utf8` (UTF-8 with a mark), `Set-Content` (ANSI),
// and Notepad's encodings (UTF-8 without a final newline by default; UTF-8 with BOM, UTF-16 LE and BE). The token and
// the other secrets are read from each; a token that really holds a space or a control is refused, naming which.
// signgate.config.json with `\` in its paths (as written on Windows) is read on this OS too.
import { mkdtempSync, mkdirSync, copyFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { readFirstLine, resolveAccessToken } from '../../src/workflows/access-token.js';
import { loadConfig } from '../../src/workflows/config.js';
import { prepareSettings } from '../../src/workflows/pipeline/settings.js';
import { fixturePath } from '../helpers/fixtures.js';

const TOKEN = 'sgt_3q2d8FhWv0-Kb9_xYz.AbC';
const utf16le = (text: string) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
const utf16be = (text: string) => Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(text, 'utf16le').swap16()]);
const utf8bom = (text: string) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text, 'utf8')]);

/** What each tool writes for `text`. */
const WRITERS: Record<string, (text: string) => Buffer> = {
  'PowerShell 5.1 $t > token.txt': (t) => utf16le(`${t}\r\n`),
  'PowerShell 5.1 Out-File': (t) => utf16le(`${t}\r\n`),
  'PowerShell 5.1 Out-File -Encoding utf8': (t) => utf8bom(`${t}\r\n`),
  'PowerShell 5.1 Set-Content': (t) => Buffer.from(`${t}\r\n`, 'latin1'),
  'PowerShell 7 $t > token.txt': (t) => Buffer.from(`${t}\n`, 'utf8'),
  'Notepad (UTF-8, the default)': (t) => Buffer.from(t, 'utf8'),
  'Notepad UTF-8 with BOM': (t) => utf8bom(t),
  'Notepad UTF-16 LE': (t) => utf16le(t),
  'Notepad UTF-16 BE': (t) => utf16be(t),
};

const folder = () => mkdtempSync(join(tmpdir(), 'signgate-windows-files-'));

describe('a token file', () => {
  test.each(Object.keys(WRITERS))('written by %s is read', (tool) => {
    const file = join(folder(), 'token.txt');
    writeFileSync(file, WRITERS[tool]!(TOKEN));
    expect(resolveAccessToken({ accessTokenFile: file, env: {} })).toBe(TOKEN);
  });

  test('a connection string in a file written by PowerShell 5.1 is read whole', () => {
    const file = join(folder(), 'database.txt');
    writeFileSync(file, WRITERS['PowerShell 5.1 Out-File']!('postgres://signgate:pässwörd@127.0.0.1:5432/signgate'));
    expect(readFirstLine(file, 'hint')).toBe('postgres://signgate:pässwörd@127.0.0.1:5432/signgate');
  });

  test.each([
    ['a space', `${TOKEN.slice(0, 10)} ${TOKEN.slice(10)}`, 'a space at character 11'],
    ['a tab', `${TOKEN}\tcomment`, 'a tab at character 27'],
    ['a no-break space', `${TOKEN.slice(0, 10)}\u00a0${TOKEN.slice(10)}`, 'a no-break space at character 11'],
    ['a control character', `${TOKEN.slice(0, 4)}\u0007${TOKEN.slice(4)}`, 'a control character (U+0007) at character 5'],
  ])('holding %s (in UTF-16LE as PowerShell writes it) is refused, naming the character and never the token', (_what, text, said) => {
    const file = join(folder(), 'token.txt');
    writeFileSync(file, WRITERS['PowerShell 5.1 $t > token.txt']!(text));
    let message = '';
    try {
      resolveAccessToken({ accessTokenFile: file, env: {} });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain(said);
    expect(message).not.toContain(TOKEN.slice(4, 20));
  });
});

describe('signgate.config.json written on Windows', () => {
  test.each(['Notepad UTF-8 with BOM', 'PowerShell 5.1 Out-File', 'Notepad (UTF-8, the default)'])(
    'saved by %s with "keys\\\\12345_public.snk": the key is found on this OS',
    (tool) => {
      const dir = folder();
      mkdirSync(join(dir, 'keys'));
      copyFileSync(fixturePath('test-keys/12345_public.snk'), join(dir, 'keys', '12345_public.snk'));
      const file = join(dir, 'signgate.config.json');
      writeFileSync(file, WRITERS[tool]!('{\r\n  "vendor": "Contoso",\r\n  "keys": ["keys\\\\12345_public.snk"],\r\n  "output": "out\\\\report.sarif"\r\n}'));
      const { config } = loadConfig(file);
      expect(config.keys).toEqual([join(dir, 'keys', '12345_public.snk')]);
      expect(config.output).toBe(join(dir, 'out', 'report.sarif'));
      const prepared = prepareSettings({ config: file });
      expect(prepared.settings.keys.map((k) => k.token)).toEqual(['5d004f218731cd20']);
    },
  );
});
