// `signgate fix` through the built CLI, on the SDK fixture whose add-in references an unsigned library (SG401):
// the command SG401's hint prints cures it; refusals write nothing; bad options and inputs are named.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { folderArgument } from '../../src/core/shown-paths.js';
import { readModule } from '../../src/strongname/well-formed.js';
import { parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { classifyStrongName, signAssembly, verifyStrongName } from '../../src/strongname/strong-name.js';
import { publicKeyToken } from '../../src/strongname/key-token.js';
import { fixture, fixturePath, has, hasMono, repoRoot, runCli, runMono } from '../helpers/fixtures.js';
import { buildOnce, runDotnetTests } from '../sdk/dotnet.js';

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

  test("--delay-sign with the option public key: the library is delay-signed for the vendor's service", () => {
    const folder = copyFixture('delay');
    const r = runCli(['fix', 'delay', '--delay-sign', OPTION_KEY, '--in-place'], { cwd: root });
    expect(r.status, r.stdout + r.stderr).toBe(0);
    const lib = readModule(readFileSync(join(folder, LIB)));
    expect(classifyStrongName(lib).state).toBe('delay-signed');
    expect(publicKeyToken(lib.assembly!.publicKey)).toBe(publicKeyToken(parseStrongNameKeyFile(fixture('test-keys/12345_public.snk')).publicKey.blob));
  });
});

describe('a refusal leaves its file and the files tied to it as they were; the rest is fixed', () => {
  test("an add-in signed with another publisher's key that must change is refused, and the whole set stays as it was; --force re-signs it", () => {
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
    // The library is tied to the add-in: fixed alone, it would no longer match the add-in's reference to it.
    expect(r.stdout).toContain(`other/${LIB}: refused`);
    expect(r.stdout).toContain(
      'error SG_ERR_FIX_DEPENDENCY_REFUSED: not fixed, because WrongTurn.UnsignedReference (other/WrongTurn.UnsignedReference.dll) could not be',
    );
    expect(r.stdout).toContain('0 files written, 0 unchanged, 0 skipped, 2 refused, left as they were');
    expect(hashes(folder)).toEqual(original);
    const forced = runCli(['fix', 'other', '--key', OWN_KEY, '--in-place', '--force'], { cwd: root });
    expect(forced.status, forced.stdout).toBe(0);
    expect(forced.stdout).toContain(`other/${ADDIN}: re-signed with your key`);
    expect(verifyStrongName(readModule(readFileSync(addinPath))).status.publicKeyToken).toBe(ownToken);
  });

  test('refused files, one tied to the add-in, beside fixable ones: each refusal is reported, the rest is written, exit 1; listed, they are skipped', () => {
    const folder = copyFixture('mixed');
    // UnsignedLib with bytes after its section table that a data directory (bound imports) points at: refused.
    const libPath = join(folder, LIB);
    const lib = Uint8Array.from(readFileSync(libPath));
    const image = readModule(lib).image;
    const tableEnd = image.sectionTableFileOffset + image.numberOfSections * 40;
    const view = new DataView(lib.buffer);
    view.setUint32(image.dataDirectories[11]!.entryFileOffset, tableEnd, true);
    view.setUint32(image.dataDirectories[11]!.entryFileOffset + 4, 8, true);
    lib.fill(0xbb, tableEnd, tableEnd + 8);
    // ...and a byte no structure accounts for in the padding before its entry stub, so that fix must add a section.
    const entry = view.getUint32(image.optionalHeaderFileOffset + 16, true);
    lib[image.sections[0]!.pointerToRawData + entry - image.sections[0]!.virtualAddress - 1] = 0xcc;
    writeFileSync(libPath, lib);
    // A file that cannot be read, tied to nothing; an unrelated unsigned library; a native DLL.
    writeFileSync(join(folder, 'Broken.dll'), readFileSync(fixturePath('assemblies/unsigned.dll')).subarray(0, 1500));
    writeFileSync(join(folder, 'unsigned.dll'), readFileSync(fixturePath('assemblies/unsigned.dll')));
    const native = Uint8Array.from(readFileSync(fixturePath('assemblies/unsigned.dll')));
    const cli = readModule(native).image.dataDirectories[14]!.entryFileOffset;
    native.fill(0, cli, cli + 8);
    writeFileSync(join(folder, 'Native.dll'), native);
    const original = hashes(folder);

    const r = runCli(['fix', 'mixed', '--key', OWN_KEY, '--in-place'], { cwd: root });
    expect(r.status, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toContain(`mixed/${LIB}: refused\n  error SG_ERR_PE_NO_ROOM: the bytes after the section table at 0x1F0 are in use by data directory 11`);
    expect(r.stdout).toContain('(rebuild it with a current compiler, or ask its publisher for a strong-named build)');
    expect(r.stdout).toContain(`mixed/${ADDIN}: refused\n  error SG_ERR_FIX_DEPENDENCY_REFUSED: not fixed, because UnsignedLib (mixed/${LIB}) could not be`);
    expect(r.stdout).toMatch(/mixed\/Broken\.dll: refused\n {2}error SG_ERR_PE_/);
    expect(r.stdout).toContain('mixed/unsigned.dll: strong-named');
    expect(r.stdout).toContain('mixed/Native.dll: skipped');
    expect(r.stdout).toContain('1 file written, 0 unchanged, 1 skipped, 3 refused, left as they were');
    const after = hashes(folder);
    expect(verifyStrongName(readModule(readFileSync(join(folder, 'unsigned.dll')))).valid).toBe(true);
    expect({ ...after, 'unsigned.dll': original['unsigned.dll'] }).toEqual(original);
    expect(after['unsigned.dll']).not.toBe(original['unsigned.dll']);

    // The same files through --list (as the build passes its references): the ones that cannot be fixed are skipped.
    writeFileSync(join(folder, 'unsigned.dll'), readFileSync(fixturePath('assemblies/unsigned.dll')));
    const list = join(root, 'mixed.list');
    writeFileSync(
      list,
      readdirSync(folder)
        .map((f) => join(folder, f))
        .join('\r\n'),
    );
    const listed = runCli(['fix', '--list', list, '--key', OWN_KEY, '--out', 'mixed-out', '--flat', '--from-msbuild'], { cwd: root });
    expect(listed.status, listed.stdout + listed.stderr).toBe(0);
    expect(listed.stdout).toContain(`mixed/${LIB} : warning SG_ERR_PE_NO_ROOM : signgate fix: skipped: the bytes after the section table`);
    expect(listed.stdout).toContain(`mixed/${ADDIN} : warning SG_ERR_FIX_DEPENDENCY_REFUSED : signgate fix: skipped: not fixed, because UnsignedLib`);
    expect(listed.stdout).not.toContain('Native.dll');
    expect(readdirSync(join(root, 'mixed-out'))).toEqual(['unsigned.dll']);
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

const hasMonoBuild = has('mcs') && has('resgen') && has('mono');
if (process.env.CI && !hasMonoBuild) throw new Error('CI is set but mcs, resgen or mono is not installed; .ci/run must apt-get install mono-devel');

/**
 * An add-in with a German satellite, as a build that signs only the add-in leaves it: Addin.exe delay-signed with
 * option 12345's public key (for the vendor's service), de/Addin.resources.dll without a strong name.
 * The add-in prints its Greeting in the culture given (Hello, or Hallo from the satellite).
 */
function buildLocalizedAddin(name: string): string {
  const folder = join(root, name);
  const src = join(folder, 'src');
  mkdirSync(join(folder, 'de'), { recursive: true });
  mkdirSync(src, { recursive: true });
  writeFileSync(
    join(src, 'Addin.cs'),
    `using System.Globalization; using System.Resources;
[assembly: System.Reflection.AssemblyVersion("1.2.0.0")]
public static class Program {
  public static int Main(string[] args) {
    var culture = new CultureInfo(args.Length > 0 ? args[0] : "de");
    System.Console.WriteLine(new ResourceManager("Strings", typeof(Program).Assembly).GetString("Greeting", culture));
    return 0;
  }
}`,
  );
  writeFileSync(join(src, 'Satellite.cs'), '[assembly: System.Reflection.AssemblyCulture("de")]\n[assembly: System.Reflection.AssemblyVersion("1.2.0.0")]\n');
  writeFileSync(join(src, 'Strings.txt'), 'Greeting=Hello\n');
  writeFileSync(join(src, 'Strings.de.txt'), 'Greeting=Hallo\n');
  execFileSync('resgen', [join(src, 'Strings.txt'), join(src, 'Strings.resources')]);
  execFileSync('resgen', [join(src, 'Strings.de.txt'), join(src, 'Strings.de.resources')]);
  execFileSync('mcs', [
    '-nologo',
    '-target:exe',
    '-delaysign+',
    `-keyfile:${OPTION_KEY}`,
    `-resource:${join(src, 'Strings.resources')},Strings.resources`,
    `-out:${join(folder, 'Addin.exe')}`,
    join(src, 'Addin.cs'),
  ]);
  execFileSync('mcs', [
    '-nologo',
    '-target:library',
    `-resource:${join(src, 'Strings.de.resources')},Strings.de.resources`,
    `-out:${join(folder, 'de', 'Addin.resources.dll')}`,
    join(src, 'Satellite.cs'),
  ]);
  rmSync(src, { recursive: true });
  return folder;
}

describe.skipIf(!hasMonoBuild || !runDotnetTests)('satellite assemblies', () => {
  test("a satellite takes its main assembly's key, not --key: .NET (bound as .NET Framework binds) and Mono load its string", async () => {
    const folder = buildLocalizedAddin('localized');
    const optionToken = publicKeyToken(parseStrongNameKeyFile(fixture('test-keys/12345_public.snk')).publicKey.blob);
    const r = runCli(['fix', 'localized', '--key', OWN_KEY, '--in-place'], { cwd: root });
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('localized/Addin.exe: unchanged');
    expect(r.stdout).toContain('localized/de/Addin.resources.dll: strong-named');
    expect(r.stdout).toContain(`public key token ${optionToken}`);
    expect(r.stdout).toContain(
      `note: a satellite assembly (culture de): it takes the key of its main assembly Addin (token ${optionToken}), as the runtime looks for it by that token; it is delay-signed, to be signed with that key as its main assembly is`,
    );
    const satellite = readModule(readFileSync(join(folder, 'de', 'Addin.resources.dll')));
    expect(classifyStrongName(satellite).state).toBe('delay-signed');
    expect(publicKeyToken(satellite.assembly!.publicKey)).toBe(optionToken);
    // --delay-sign with the option key gives the same; a satellite alone is named with what it lacks.
    const again = buildLocalizedAddin('localized-delay');
    const delay = runCli(['fix', 'localized-delay', '--delay-sign', OPTION_KEY, '--in-place'], { cwd: root });
    expect(delay.status, delay.stdout).toBe(0);
    expect(delay.stdout).not.toContain('takes the key of its main assembly'); // the key given is the main assembly's: nothing to say
    expect(readFileSync(join(again, 'de', 'Addin.resources.dll')).equals(readFileSync(join(folder, 'de', 'Addin.resources.dll')))).toBe(true);
    const alone = runCli(['fix', 'localized-delay/de', '--key', OWN_KEY, '--dry-run'], { cwd: root });
    expect(alone.stdout).toContain('note: a satellite assembly (culture de) whose main assembly Addin is not among the inputs');

    // The control: the satellite with --key's token, what it got before, is not the one the runtime asks for.
    const control = join(root, 'localized-control');
    cpSync(folder, control, { recursive: true });
    writeFileSync(
      join(control, 'de', 'Addin.resources.dll'),
      signAssembly(readModule(readFileSync(join(folder, 'de', 'Addin.resources.dll'))), parseStrongNameKeyFile(fixture('test-keys/12345_keypair.snk'))),
    );
    const own = buildLocalizedAddin('localized-own');
    const wrong = runCli(['fix', 'localized-own/de', '--key', OWN_KEY, '--in-place'], { cwd: root });
    expect(wrong.status).toBe(0);
    expect(publicKeyToken(readModule(readFileSync(join(own, 'de', 'Addin.resources.dll'))).assembly!.publicKey)).toBe(ownToken);

    const mono = (dir: string) => execFileSync('mono', [join(dir, 'Addin.exe'), 'de'], { encoding: 'utf8' }).trim();
    expect(mono(folder)).toBe('Hallo');
    expect(mono(control)).toBe('Hallo');
    const build = await buildOnce(join(repoRoot, 'tools', 'fix-host'));
    expect(build.status, build.output).toBe(0);
    const host = (dir: string) =>
      spawnSync('dotnet', [join(repoRoot, 'tools', 'fix-host', 'bin', 'Release', 'fix-host.dll'), dir, 'Addin.exe'], {
        encoding: 'utf8',
        env: { ...process.env, DOTNET_CLI_TELEMETRY_OPTOUT: '1' },
      });
    const fixed = host(folder);
    expect(fixed.status, fixed.stderr).toBe(0);
    expect(fixed.stdout.trim()).toBe('Hallo');
    expect(fixed.stderr).toContain(`satellite bound Addin.resources, Version=1.2.0.0, Culture=de, PublicKeyToken=${optionToken}`);
    // A satellite with another key (--key's, as before) is not found: the neutral string comes back.
    const other = host(own);
    expect(other.stdout.trim()).toBe('Hello');
    expect(other.stderr).toContain(`is Addin.resources, Version=1.2.0.0, Culture=de, PublicKeyToken=${ownToken}`);
    // Signed by the service with the option's key pair, it binds the same.
    expect(host(control).stdout.trim()).toBe('Hallo');
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
