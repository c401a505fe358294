// Inputs that hold no assembly (an empty folder) never pass: audit, fix and sign stop with SG_ERR_NO_INPUT naming the
// folder (exit 3, as an input that matches nothing), and sign says the destination only when that is where the files are.
import { cpSync, existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { fixturePath, runCli } from '../helpers/fixtures.js';

const root = mkdtempSync(join(tmpdir(), 'signgate-empty-'));
mkdirSync(join(root, 'empty'));
const KEY = fixturePath('test-keys/12345_public.snk');
const NO_INPUT = 'error SG_ERR_NO_INPUT: empty holds no .dll or .exe file';

describe('a folder with no assemblies', () => {
  test('audit: exit 3 naming the folder, and no report written', () => {
    const r = runCli(['audit', 'empty/', '--key', KEY, '--vendor', 'Contoso', '-o', 'audit.html'], { cwd: root });
    expect(r.status).toBe(3);
    expect(r.stderr).toContain(NO_INPUT);
    expect(r.stderr).toContain("hint: Name the add-in's build output");
    expect(existsSync(join(root, 'audit.html'))).toBe(false);
  });

  test('fix: exit 3 naming the folder', () => {
    const r = runCli(['fix', 'empty', '--key', fixturePath('test-keys/other_keypair.snk'), '--in-place'], { cwd: root });
    expect(r.status).toBe(3);
    expect(r.stderr).toContain(NO_INPUT);
    expect(r.stdout).toBe('');
  });

  test('sign: the folder holds no assemblies, not the destination advice', () => {
    const r = runCli(['sign', 'empty', '--key', KEY, '--vendor', 'Contoso'], { cwd: root });
    expect(r.status).toBe(3);
    expect(r.stderr).toContain(NO_INPUT);
    expect(r.stderr).not.toContain('destination');
  });

  test('sign: files that are all in the destination still get the destination advice', () => {
    cpSync(fixturePath('addin'), join(root, 'out', 'signed'), { recursive: true });
    const r = runCli(['sign', 'out', '--destination-path', 'out', '--key', KEY, '--vendor', 'Contoso'], { cwd: root });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('no files to sign outside the destination folder');
  });
});
