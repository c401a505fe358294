// The Windows executable as it ships (Node 24) on Windows APIs (Wine 10): check, verify and audit over Windows inputs
// give the same JSON as the Linux build, and the client round trip (licenses, sign into a non-ASCII Z:\ folder, jobs)
// works against `signgate serve` on 127.0.0.1, also when the Windows process is killed or gets Ctrl-C mid-job. The inputs: Z:\ and C:\ paths with `\`, a folder and file named in another case than on disk,
// names with spaces and non-ASCII letters, a path over 260 characters, a BOM + CRLF signgate.config.json with a
// `\` glob, a device name (CON.dll), and two files whose names differ only in case (both checked: SG502).
// Needs the Wine 10 root (fails in CI without it; .ci/run makes it with scripts/wine-root.sh).
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fixturePath, runCli, runCliAsync, type CliResult } from '../helpers/fixtures.js';
import { startProxy, type Proxy } from '../helpers/proxy.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { waitUntil } from '../helpers/wait.js';
import { hasWine, startWine, zPath, type WineHost } from '../helpers/wine.js';

const runWine = hasWine || Boolean(process.env.CI);
const NET48 = fixturePath('sdk/bin/net48');
const KEY = fixturePath('sdk/12345_public.snk');
const KEY_PAIR = fixturePath('test-keys/12345_keypair.snk');
const FOLDER = 'Add-in Ünïcode Österreich';

interface Finding {
  ruleId: string;
}
interface Report {
  summary: Record<string, number>;
  files: { path: string; findings: Finding[] }[];
  uploadSet: { findings: Finding[] };
}
const parse = (r: CliResult | { stdout: string; stderr: string }) => {
  try {
    return JSON.parse(r.stdout) as Report;
  } catch {
    throw new Error(`not JSON:\n${r.stdout.slice(0, 500)}\n${r.stderr.slice(0, 2000)}`);
  }
};
const ruleIds = (r: Report) => [...r.files.flatMap((f) => f.findings), ...r.uploadSet.findings].map((f) => f.ruleId).sort();

// One executable and one prefix for the whole file (the build takes a minute or two).
let wine: WineHost;
beforeAll(async () => {
  if (!runWine) return;
  wine = await startWine();
  expect(wine.version).toMatch(/^wine-10\./);
});
afterAll(async () => {
  await wine?.close();
});

describe.runIf(runWine)('signgate-win-x64.exe under Wine', () => {
  let work: string;
  let workC: string;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'signgate-winwork-'));
    // The add-in's output in a folder with spaces and non-ASCII letters, on Z: and on C:.
    cpSync(NET48, join(work, FOLDER, 'bin'), { recursive: true });
    copyFileSync(KEY, join(work, '12345_public.snk'));
    workC = join(wine.driveC, 'work');
    cpSync(join(work), workC, { recursive: true });
    // A path of more than 260 characters.
    const long = join(work, ...Array.from({ length: 5 }, (_, i) => `a-rather-long-folder-name-for-windows-path-limits-${i}`));
    mkdirSync(long, { recursive: true });
    copyFileSync(join(NET48, 'SampleAddin.dll'), join(long, 'LongAddin.dll'));
    expect(zPath(long).length).toBeGreaterThan(260);
    // A device name, and two files whose names differ only in case.
    mkdirSync(join(work, 'devices'));
    copyFileSync(join(NET48, 'SampleAddin.dll'), join(work, 'devices', 'CON.dll'));
    mkdirSync(join(work, 'cases'));
    copyFileSync(join(NET48, 'SampleAddin.dll'), join(work, 'cases', 'CaseAddin.dll'));
    copyFileSync(join(NET48, 'SampleAddin.Helpers.dll'), join(work, 'cases', 'caseaddin.DLL'));
    // A config written on Windows: BOM, CRLF, a `\` glob.
    mkdirSync(join(work, 'configured'));
    cpSync(NET48, join(work, 'configured', 'bin', 'Release'), { recursive: true });
    copyFileSync(KEY, join(work, 'configured', '12345_public.snk'));
    writeFileSync(
      join(work, 'configured', 'signgate.config.json'),
      `\uFEFF{\r\n  "vendor": "Contoso",\r\n  "keys": ["12345_public.snk"],\r\n  "paths": ["bin\\\\Release\\\\**\\\\*.dll"]\r\n}\r\n`,
    );
    // Signed on Linux with the key pair (as the service signs), verified on both.
    mkdirSync(join(work, 'signed'));
    for (const name of ['SampleAddin.dll', 'SampleAddin.Helpers.dll']) {
      const r = runCli(['resign', join(NET48, name), '--key-pair', KEY_PAIR, '-o', join(work, 'signed', name)]);
      expect(r.status, r.stderr).toBe(0);
    }
  });
  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  /** Runs the same command on Linux (POSIX paths) and under Wine (Windows paths) in `cwd`; both JSON reports. */
  const both = async (cwd: string, linuxArgs: string[], windowsArgs: string[]) => {
    const linux = runCli(linuxArgs, { cwd });
    const windows = await wine.run(windowsArgs, cwd);
    return { linux, windows };
  };
  const checkArgs = ['--vendor', 'Contoso', '--key', '12345_public.snk', '--format', 'json'];

  test('check, a Z:\\ path with spaces and non-ASCII letters: the same JSON as on Linux', async () => {
    const { linux, windows } = await both(work, ['check', join(work, FOLDER, 'bin'), ...checkArgs], ['check', zPath(join(work, FOLDER, 'bin')), ...checkArgs]);
    expect(windows.status, windows.stderr).toBe(linux.status);
    expect(parse(windows)).toEqual(parse(linux));
    expect(parse(linux).summary.files).toBe(3);
  });

  test('check, a C:\\ path: the same JSON as on Linux', async () => {
    const { linux, windows } = await both(workC, ['check', join(workC, FOLDER, 'bin'), ...checkArgs], ['check', `C:\\work\\${FOLDER}\\bin`, ...checkArgs]);
    expect(windows.status, windows.stderr).toBe(linux.status);
    expect(parse(windows)).toEqual(parse(linux));
  });

  test('check, the folder and a file named in another case than on disk: the same verdicts', async () => {
    const upper = zPath(join(work, FOLDER.toUpperCase(), 'BIN'));
    const linux = runCli(['check', join(work, FOLDER, 'bin'), ...checkArgs], { cwd: work });
    const windows = await wine.run(['check', upper, ...checkArgs], work);
    expect(windows.status, windows.stderr).toBe(linux.status);
    expect(parse(windows).summary).toEqual(parse(linux).summary);
    expect(ruleIds(parse(windows))).toEqual(ruleIds(parse(linux)));
    const file = await wine.run(['check', zPath(join(work, FOLDER, 'bin', 'SAMPLEADDIN.DLL')), ...checkArgs], work);
    expect(file.status, file.stderr).toBe(0);
    expect(parse(file).summary.files).toBe(1);
  });

  test('check, a path longer than 260 characters: the same JSON as on Linux', async () => {
    const long = join(work, ...Array.from({ length: 5 }, (_, i) => `a-rather-long-folder-name-for-windows-path-limits-${i}`));
    const { linux, windows } = await both(work, ['check', long, ...checkArgs], ['check', zPath(long), ...checkArgs]);
    expect(windows.status, windows.stderr).toBe(linux.status);
    expect(parse(windows)).toEqual(parse(linux));
  });

  test('check, CON.dll among the inputs: SG505 on both, the same JSON', async () => {
    const { linux, windows } = await both(work, ['check', join(work, 'devices'), ...checkArgs], ['check', zPath(join(work, 'devices')), ...checkArgs]);
    expect(linux.status).toBe(1);
    expect(windows.status, windows.stderr).toBe(1);
    expect(ruleIds(parse(windows))).toContain('SG505');
    expect(parse(windows)).toEqual(parse(linux));
  });

  test('check, two files whose names differ only in case: both checked and SG502 on Windows as on Linux', async () => {
    const { linux, windows } = await both(work, ['check', join(work, 'cases'), ...checkArgs], ['check', zPath(join(work, 'cases')), ...checkArgs]);
    expect(linux.status).toBe(1);
    expect(windows.status, windows.stderr).toBe(1);
    expect(parse(windows).summary.files).toBe(2);
    expect(ruleIds(parse(windows))).toContain('SG502');
    expect(parse(windows)).toEqual(parse(linux));
  });

  test('check from signgate.config.json with a BOM, CRLF and a `\\` glob: the same JSON as on Linux', async () => {
    const cwd = join(work, 'configured');
    const { linux, windows } = await both(cwd, ['check', '--format', 'json'], ['check', '--format', 'json']);
    expect(windows.status, windows.stderr).toBe(linux.status);
    expect(parse(windows)).toEqual(parse(linux));
    expect(parse(linux).summary.files).toBe(3);
  });

  test('verify the files signed on Linux: valid, the same JSON', async () => {
    const signed = join(work, 'signed');
    const { linux, windows } = await both(
      work,
      ['verify', signed, '--key', '12345_public.snk', '--json'],
      ['verify', zPath(signed), '--key', '12345_public.snk', '--json'],
    );
    expect(linux.status, linux.stderr).toBe(0);
    expect(windows.status, windows.stderr).toBe(0);
    expect(JSON.parse(windows.stdout)).toEqual(JSON.parse(linux.stdout));
  });

  test('inspect, a Z:\\ folder with spaces and non-ASCII letters named from the working folder with `\\`: the same JSON as on Linux', async () => {
    const { linux, windows } = await both(work, ['inspect', `${FOLDER}/bin`, '--json'], ['inspect', `${FOLDER}\\bin`, '--json']);
    expect(linux.status, linux.stderr).toBe(0);
    expect(windows.status, windows.stderr).toBe(0);
    expect(JSON.parse(windows.stdout)).toEqual(JSON.parse(linux.stdout));
    expect((JSON.parse(linux.stdout) as unknown[]).length).toBe(3);
  });

  test('fix, an unsigned dependency in a non-ASCII Z:\\ folder, written to another: the same bytes and JSON as on Linux', async () => {
    const unsigned = join(work, FOLDER, 'unsigned');
    mkdirSync(unsigned, { recursive: true });
    copyFileSync(fixturePath('sdk/bin/wrong-turns/UnsignedReference/UnsignedLib.dll'), join(unsigned, 'UnsignedLib.dll'));
    copyFileSync(KEY_PAIR, join(work, 'own_keypair.snk'));
    const { linux, windows } = await both(
      work,
      ['fix', join(unsigned), '--key', 'own_keypair.snk', '--out', join(work, 'fixed', 'linux'), '--json'],
      ['fix', zPath(unsigned), '--key', 'own_keypair.snk', '--out', zPath(join(work, 'Fixed Ünïcode', 'WINDOWS')), '--json'],
    );
    expect(linux.status, linux.stderr).toBe(0);
    expect(windows.status, windows.stderr).toBe(0);
    type FixJson = { files: { outcome: string; writtenTo?: string }[] };
    const [l, w] = [JSON.parse(linux.stdout) as FixJson, JSON.parse(windows.stdout) as FixJson];
    expect(w.files.map((f) => f.outcome)).toEqual(['strong-named']);
    // Only where each was written differs.
    expect(w.files.map((f) => ({ ...f, writtenTo: undefined }))).toEqual(l.files.map((f) => ({ ...f, writtenTo: undefined })));
    expect(readFileSync(join(work, 'Fixed Ünïcode', 'WINDOWS', 'UnsignedLib.dll')).equals(readFileSync(join(work, 'fixed', 'linux', 'UnsignedLib.dll')))).toBe(
      true,
    );
    const verified = runCli(['verify', join(work, 'Fixed Ünïcode', 'WINDOWS', 'UnsignedLib.dll'), '--json']);
    expect(verified.status, verified.stdout).toBe(0);
  });

  test('audit of the signed release: the same JSON as on Linux', async () => {
    const signed = join(work, 'signed');
    const args = (folder: string) => ['audit', folder, '--vendor', 'Contoso', '--key', '12345_public.snk', '--format', 'json', '--no-timestamp'];
    // The job ledger the audit reads sits where each platform keeps it: the same folder for both here.
    const cache = join(work, 'cache');
    const linux = runCli(args(signed), { cwd: work, env: { SIGNGATE_CACHE_DIR: cache } });
    const windows = await wine.run(args(zPath(signed)), work, { SIGNGATE_CACHE_DIR: zPath(cache) });
    expect(windows.status, windows.stderr).toBe(linux.status);
    expect(JSON.parse(windows.stdout)).toEqual(JSON.parse(linux.stdout));
  });
});

describe.runIf(runWine)('the client on Windows APIs against signgate serve on 127.0.0.1', () => {
  let server: TestServer;
  let token: string;
  let work: string;
  /** A proxy in front of the service that holds every status answer while `holdStatus` is true. */
  let proxy: Proxy;
  let holdStatus = false;
  const held: (() => void)[] = [];
  const release = () => {
    holdStatus = false;
    held.splice(0).forEach((go) => go());
  };

  beforeAll(async () => {
    server = await startServer();
    token = server.token();
    const { origin, pathname } = new URL(server.baseUrl);
    proxy = await startProxy(origin, pathname, (req, res) => {
      if (!holdStatus || !/\/status$/.test(req.url ?? '')) return false;
      // Answered once released: the request waits as a slow service would.
      held.push(
        () =>
          void fetch(new URL(req.url!, origin), { headers: { authorization: req.headers.authorization ?? '' } }).then(async (r) =>
            res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' }).end(Buffer.from(await r.arrayBuffer())),
          ),
      );
      return true;
    });
    work = mkdtempSync(join(tmpdir(), 'signgate-winclient-'));
    cpSync(NET48, join(work, FOLDER, 'bin'), { recursive: true });
    copyFileSync(KEY, join(work, '12345_public.snk'));
  });
  afterAll(async () => {
    release();
    await proxy?.close();
    await server?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const env = (cache: string) => ({ SIGNGATE_ACCESS_TOKEN: token, SIGNGATE_CACHE_DIR: zPath(cache) });
  const signArgs = (baseUrl: string, destination: string) => {
    const bin = zPath(join(work, FOLDER, 'bin'));
    return [
      'sign',
      bin,
      '--root',
      bin,
      '--vendor',
      'Contoso',
      '--key',
      '12345_public.snk',
      '--base-url',
      baseUrl,
      '--destination-path',
      zPath(destination),
      '--poll-interval',
      '50',
      '--json',
    ];
  };
  interface SignJson {
    jobs: { jobId: unknown }[];
    files: { name?: string; path?: string; state?: string; verdict?: string }[];
  }
  const verifyOnLinux = (folder: string) => {
    const r = runCli(['verify', folder, '--key', KEY, '--json']);
    expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
    return JSON.parse(r.stdout) as unknown;
  };
  /** Waits until the proxy has seen `what` (a "METHOD path" pattern) `count` times. */
  const seen = async (what: RegExp, count = 1) => {
    await waitUntil(
      `${count} request(s) ${what} through the proxy`,
      () => proxy.seen.filter((s) => what.test(s)).length >= count,
      () => proxy.seen.join(', '),
      { intervalMs: 100 },
    );
  };

  test('licenses: the same JSON as on Linux', async () => {
    const cache = mkdtempSync(join(work, 'cache-'));
    const windows = await wine.run(['licenses', '--base-url', server.baseUrl, '--json'], work, env(cache));
    const linux = await runCliAsync(['licenses', '--base-url', server.baseUrl, '--json'], {
      cwd: work,
      env: { SIGNGATE_ACCESS_TOKEN: token, SIGNGATE_CACHE_DIR: cache },
    });
    expect(windows.status, windows.stderr).toBe(0);
    expect(linux.status, linux.stderr).toBe(0);
    expect(JSON.parse(windows.stdout)).toEqual(JSON.parse(linux.stdout));
    expect(windows.stdout + windows.stderr).not.toContain(token);
  });

  test('sign into a non-ASCII Z:\\ folder: every file signed and verified, and jobs list shows the job as Linux does', async () => {
    const cache = mkdtempSync(join(work, 'cache-'));
    const destination = join(work, 'Signiert Ünïcode');
    const r = await wine.run(signArgs(server.baseUrl, destination), work, env(cache));
    expect(r.status, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout) as SignJson;
    expect(result.jobs).toHaveLength(1);
    expect(readdirSync(destination).sort()).toEqual(expect.arrayContaining(['SampleAddin.Helpers.dll', 'SampleAddin.dll']));
    verifyOnLinux(destination);
    expect(r.stdout + r.stderr).not.toContain(token);
    const windowsJobs = await wine.run(['jobs', 'list', '--base-url', server.baseUrl, '--json'], work, env(cache));
    const linuxJobs = await runCliAsync(['jobs', 'list', '--base-url', server.baseUrl, '--json'], {
      cwd: work,
      env: { SIGNGATE_ACCESS_TOKEN: token, SIGNGATE_CACHE_DIR: cache },
    });
    expect(windowsJobs.status, windowsJobs.stderr).toBe(0);
    expect(JSON.parse(windowsJobs.stdout)).toEqual(JSON.parse(linuxJobs.stdout));
    expect(JSON.stringify(JSON.parse(windowsJobs.stdout))).toContain(String(result.jobs[0]!.jobId));
  });

  /**
   * Starts `sign` through the holding proxy, waits until its job polls, and ends it with `signal`; then runs it
   * again. Ctrl-C (SIGINT, which Wine turns into a console control event) is sent to a program started by a Windows
   * parent, whose exit code is the one Windows reports (see startUnderParent); a kill ends the program itself.
   */
  const interruptThenResume = async (signal: NodeJS.Signals) => {
    const cache = mkdtempSync(join(work, 'cache-'));
    const destination = join(work, `out-${signal}`);
    const uploadsBefore = proxy.seen.filter((s) => /^POST .*\/assemblies$/.test(s)).length;
    const statusBefore = proxy.seen.filter((s) => /\/status$/.test(s)).length;
    holdStatus = true;
    const args = signArgs(proxy.baseUrl, destination);
    const first = signal === 'SIGINT' ? wine.startUnderParent(args, work, env(cache)) : wine.start(args, work, env(cache));
    await seen(/^POST .*\/assemblies$/, uploadsBefore + 1);
    await seen(/\/status$/, statusBefore + 1);
    if ('child' in first) first.child.kill(signal);
    else process.kill(await first.program(), signal);
    const ended = await first.done;
    release();
    const again = await wine.run(signArgs(proxy.baseUrl, destination), work, env(cache));
    expect(again.status, again.stderr).toBe(0);
    // One upload for both runs: the second run took the job the first one left on the service.
    expect(proxy.seen.filter((s) => /^POST .*\/assemblies$/.test(s)).length).toBe(uploadsBefore + 1);
    verifyOnLinux(destination);
    expect(existsSync(join(destination, 'SampleAddin.dll'))).toBe(true);
    return { ended, again: JSON.parse(again.stdout) as SignJson };
  };

  test('sign, the Windows process killed while its job is on the service: the same command resumes that job', async () => {
    const { ended } = await interruptThenResume('SIGKILL');
    expect(ended.signal ?? ended.status).not.toBe(0);
  });

  test('sign, Ctrl-C (a console control event) while its job is on the service: says the job is kept, exits 130 to its Windows parent, and the same command resumes it', async () => {
    const { ended, again } = await interruptThenResume('SIGINT');
    expect(ended.status, ended.stderr).toBe(130);
    expect(ended.stderr).toContain(String(again.jobs[0]!.jobId));
  });
});
