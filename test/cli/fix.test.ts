// `signgate fix` through the built CLI, on the SDK fixture whose add-in references an unsigned library (SG401):
// the command SG401's hint prints cures it; refusals write nothing; bad options and inputs are named.
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { folderArgument } from '../../src/rules/sg401-unsigned-reference.js';
import { readModule } from '../../src/strongname/assembly-info.js';
import { parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { classifyStrongName, signAssembly, verifyStrongName } from '../../src/strongname/strong-name.js';
import { publicKeyToken } from '../../src/strongname/token.js';
import { fixture, fixturePath, hasMono, runCli, runMono } from '../helpers/fixtures.js';

const OPTION_KEY = fixturePath('test-keys/12345_public.snk');
const OWN_KEY = fixturePath('test-keys/other_keypair.snk');
const ownToken = publicKeyToken(parseStrongNameKeyFile(fixture('test-keys/other_keypair.snk')).publicKey.blob);
const root = mkdtempSync(join(tmpdir(), 'signgate-fix-'));
const ADDIN = 'WrongTurn.UnsignedReference.dll';
const LIB = 'UnsignedLib.dll';

/** A fresh copy of the SG401 fixture folder (the add-in delay-signed with option 12345, UnsignedLib without a key). */
function copyFixture(name: string): string {
  const folder = join(root, name);
  cpSync(fixturePath('sdk/bin/wrong-turns/UnsignedReference'), folder, { recursive: true });
  return folder;
}

const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
const hashes = (folder: string) => Object.fromEntries(readdirSync(folder).map((f) => [f, sha(join(folder, f))]));

describe('the cure for SG401', () => {
  test('check names the exact command; running it cures the add-in, which stays delay-signed for the vendor', () => {
    const folder = copyFixture('cure');
    const before = runCli(['check', 'cure', '--key', OPTION_KEY, '--vendor', 'Contoso'], { cwd: root });
    expect(before.status).toBe(1);
    const hint = /signgate (fix cure --key your-key\.snk --in-place)/.exec(before.stdout);
    expect(hint, before.stdout).not.toBeNull();
    const command = hint![1]!.replace('your-key.snk', OWN_KEY).split(' ');
    const fixed = runCli(command, { cwd: root });
    expect(fixed.status, fixed.stdout + fixed.stderr).toBe(0);
    expect(fixed.stdout).toContain(`cure/${LIB}: strong-named`);
    expect(fixed.stdout).toContain(`cure/${ADDIN}: references updated`);
    expect(fixed.stdout).toContain(`reference UnsignedLib gets token ${ownToken}`);
    expect(readdirSync(folder).sort()).toEqual([LIB, ADDIN].sort()); // no temporary file left behind
    const after = runCli(['check', 'cure', '--key', OPTION_KEY, '--vendor', 'Contoso'], { cwd: root });
    expect(after.status, after.stdout).toBe(0);
    expect(after.stdout).not.toContain('SG401');
    const lib = readModule(readFileSync(join(folder, LIB)));
    expect(verifyStrongName(lib).valid).toBe(true);
    const addin = readModule(readFileSync(join(folder, ADDIN)));
    expect(classifyStrongName(addin).state).toBe('delay-signed');
    expect(Buffer.from(addin.assemblyReferences.find((r) => r.name === 'UnsignedLib')!.publicKeyOrToken).toString('hex')).toBe(ownToken);
    if (hasMono) expect(runMono('sn', ['-q', '-vf', join(folder, LIB)]).status).toBe(0);
    // Run twice: nothing more to do.
    const again = runCli(command, { cwd: root });
    expect(again.stdout).toContain('0 files written, 2 unchanged');
  });

  test('--out writes the changed files below another folder and leaves the inputs as they were; --dry-run writes nothing', () => {
    const folder = copyFixture('out');
    const original = hashes(folder);
    const dry = runCli(['fix', 'out', '--key', OWN_KEY, '--dry-run'], { cwd: root });
    expect(dry.status).toBe(0);
    expect(dry.stdout).toContain('2 files would change (dry run)');
    const r = runCli(['fix', 'out', '--key', OWN_KEY, '--out', 'fixed', '--json'], { cwd: root });
    expect(r.status, r.stderr).toBe(0);
    const json = JSON.parse(r.stdout) as { files: { path: string; outcome: string; writtenTo?: string }[]; publicKeyToken: string; written: boolean };
    expect(json.publicKeyToken).toBe(ownToken);
    expect(json.files.map((f) => [f.path, f.outcome, f.writtenTo])).toEqual([
      [`out/${LIB}`, 'strong-named', `fixed/${LIB}`],
      [`out/${ADDIN}`, 'references-updated', `fixed/${ADDIN}`],
    ]);
    expect(hashes(folder)).toEqual(original);
    expect(verifyStrongName(readModule(readFileSync(join(root, 'fixed', LIB)))).valid).toBe(true);
  });

  test('--delay-sign with the option public key: the library is delay-signed for the vendor\'s service', () => {
    const folder = copyFixture('delay');
    const r = runCli(['fix', 'delay', '--delay-sign', OPTION_KEY, '--in-place'], { cwd: root });
    expect(r.status, r.stdout + r.stderr).toBe(0);
    const lib = readModule(readFileSync(join(folder, LIB)));
    expect(classifyStrongName(lib).state).toBe('delay-signed');
    expect(publicKeyToken(lib.assembly!.publicKey)).toBe(publicKeyToken(parseStrongNameKeyFile(fixture('test-keys/12345_public.snk')).publicKey.blob));
  });
});

describe('refusals write nothing', () => {
  test('an add-in signed with another publisher\'s key that must change is refused, and the whole set stays as it was; --force re-signs it', () => {
    const folder = copyFixture('other');
    // The add-in fully signed by option 12345's pair: not ours to re-sign.
    const addinPath = join(folder, ADDIN);
    writeFileSync(addinPath, signAssembly(readModule(readFileSync(addinPath)), parseStrongNameKeyFile(fixture('test-keys/12345_keypair.snk'))));
    const original = hashes(folder);
    const r = runCli(['fix', 'other', '--key', OWN_KEY, '--in-place'], { cwd: root });
    expect(r.status).toBe(1);
    expect(r.stdout).toContain(`other/${ADDIN}: refused`);
    expect(r.stdout).toContain('error SG_ERR_FIX_OTHER_PUBLISHER');
    expect(r.stdout).toContain('pass --force');
    expect(r.stdout).toContain('1 file refused: nothing was written');
    expect(hashes(folder)).toEqual(original);
    const forced = runCli(['fix', 'other', '--key', OWN_KEY, '--in-place', '--force'], { cwd: root });
    expect(forced.status, forced.stdout).toBe(0);
    expect(forced.stdout).toContain(`other/${ADDIN}: re-signed with your key`);
    expect(verifyStrongName(readModule(readFileSync(addinPath))).status.publicKeyToken).toBe(ownToken);
  });

  test('a native file named on its own is refused; in a folder it is skipped', () => {
    const folder = copyFixture('native');
    const native = Uint8Array.from(readFileSync(join(folder, LIB)));
    const cli = readModule(native).image.dataDirectories[14]!.entryFileOffset;
    native.fill(0, cli, cli + 8);
    writeFileSync(join(folder, 'Native.dll'), native);
    const named = runCli(['fix', 'native/Native.dll', '--key', OWN_KEY, '--in-place'], { cwd: root });
    expect(named.status).toBe(1);
    expect(named.stdout).toContain('native/Native.dll: refused');
    expect(named.stdout).toContain('SG_ERR_FIX_NOT_MANAGED');
    const inFolder = runCli(['fix', 'native', '--key', OWN_KEY, '--in-place'], { cwd: root });
    expect(inFolder.status, inFolder.stdout).toBe(0);
    expect(inFolder.stdout).toContain('native/Native.dll: skipped');
    expect(inFolder.stdout).toContain('2 files written, 0 unchanged, 1 skipped');
  });

  test('options that cannot work are usage errors naming what to pass', () => {
    copyFixture('usage');
    const noMode = runCli(['fix', 'usage', '--key', OWN_KEY], { cwd: root });
    expect(noMode.status).toBe(2);
    expect(noMode.stderr).toContain('--in-place, --out <folder> or --dry-run');
    const noKey = runCli(['fix', 'usage', '--in-place'], { cwd: root });
    expect(noKey.status).toBe(2);
    expect(noKey.stderr).toContain('--key <pair.snk> or --delay-sign');
    const publicOnly = runCli(['fix', 'usage', '--key', OPTION_KEY, '--in-place'], { cwd: root });
    expect(publicOnly.status).not.toBe(0);
    expect(publicOnly.stderr).toContain('12345_public.snk: holds only a public key; --key needs the key pair');
    const missingKey = runCli(['fix', 'usage', '--key', 'nowhere.snk', '--in-place'], { cwd: root });
    expect(missingKey.status).toBe(3);
    expect(missingKey.stderr).toContain('nowhere.snk: the file does not exist');
  });
});

describe('the folder SG401 names', () => {
  test.each([
    ['bin/Release/Addin.dll', 'bin/Release'],
    ['Addin.dll', '.'],
    ['My Add-in/bin/Addin.dll', '"My Add-in/bin"'],
    ['C:/Users/me/source/Addin.dll', 'C:/Users/me/source'],
    ['/abs/Addin.dll', '/abs'],
  ])('%s -> %s', (path, folder) => {
    expect(folderArgument(path)).toBe(folder);
  });
});



