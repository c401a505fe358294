// A user's mistake is never reported as an internal bug: every command given a file that does not exist, or a
// folder where a file belongs, and `serve` given a busy port, answers with a code of its own that names the
// path (or port) and says what to do. (A file root cannot read does not exist for the tests, which run as root.)
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fixturePath, runCliAsync } from '../helpers/fixtures.js';
import { refusal } from '../helpers/service-process.js';

const dir = mkdtempSync(join(tmpdir(), 'signgate-mistakes-'));
const MISSING = join(dir, 'no-such-file');
const FOLDER = dir;
const ADDIN = fixturePath('addin/SampleAddin.dll');
const KEY = fixturePath('test-keys/12345_public.snk');
const CONFIG = fixturePath('server/sandbox.json');

/** Each command with `PATH` where a file of the user's goes. */
const COMMANDS: [string, string[]][] = [
  ['check <input>', ['check', 'PATH', '--vendor', 'Contoso', '--key', KEY]],
  ['check --key', ['check', ADDIN, '--vendor', 'Contoso', '--key', 'PATH']],
  ['check --config', ['check', ADDIN, '--config', 'PATH']],
  ['verify <input>', ['verify', 'PATH']],
  ['verify --key', ['verify', ADDIN, '--key', 'PATH']],
  ['inspect <input>', ['inspect', 'PATH']],
  ['token <key>', ['token', 'PATH']],
  ['resign --key-pair', ['resign', ADDIN, '--key-pair', 'PATH', '-o', join(dir, 'out.dll')]],
  ['audit --compare', ['audit', ADDIN, '--vendor', 'Contoso', '--key', KEY, '--compare', 'PATH', '--format', 'json']],
  ['sign --access-token-file', ['sign', ADDIN, '--vendor', 'Contoso', '--key', KEY, '--base-url', 'http://127.0.0.1:9/x/v1.0', '--access-token-file', 'PATH']],
  ['sign --archive', ['sign', '--archive', 'PATH', '--vendor', 'Contoso', '--key', KEY, '--base-url', 'http://127.0.0.1:9/x/v1.0']],
  ['serve --config', ['serve', '--config', 'PATH', '--port', '0']],
  ['serve token create --config', ['serve', 'token', 'create', '--config', 'PATH', '--org', 'sandbox', '--user', 'ci', '--data-dir', join(dir, 'data')]],
  ['serve --database-file', ['serve', '--config', CONFIG, '--database-file', 'PATH', '--port', '0']],
  // A data directory is a folder: only a missing one is a mistake (an empty one is a new service's record).
  ['serve record verify --data-dir <input>', ['serve', 'record', 'verify', '--data-dir', 'PATH']],
  ['serve record export --data-dir <input>', ['serve', 'record', 'export', '--data-dir', 'PATH']],
];

describe.each([
  ['a missing file', MISSING],
  ['a folder for a file', FOLDER],
])('%s', (_what, path) => {
  // A folder is a fine input for the commands that take folders of assemblies.
  test.each(COMMANDS.filter(([name]) => path === MISSING || !name.endsWith('<input>')))(
    '%s: a code of its own, the path named, exit 2 or 3',
    async (_name, args) => {
      const r = await runCliAsync(
        args.map((a) => (a === 'PATH' ? path : a)),
        { env: { SIGNGATE_ACCESS_TOKEN: 'sgt_unused' } },
      );
      // The service says it in its JSON log (stdout) instead, as a fatal line.
      const said = args[0] === 'serve' && args[1] === '--config' ? refusal(r.stdout) : r.stderr;
      expect(said).not.toContain('SG_ERR_INTERNAL');
      expect(said).toMatch(/^error SG_ERR_[A-Z_]+: /m);
      expect(said).toContain(path === MISSING ? 'no-such-file' : path.split('/').pop()!);
      expect([2, 3]).toContain(r.status);
    },
  );
});

describe('a busy port', () => {
  let busy: Server;
  let port: number;
  beforeAll(async () => {
    busy = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    port = (busy.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((r) => busy.close(() => r())));

  test('serve on a port another program holds: SG_ERR_USAGE naming the port, with what to do', async () => {
    const r = await runCliAsync(['serve', '--config', CONFIG, '--data-dir', join(dir, 'busy'), '--port', String(port), '--host', '127.0.0.1']);
    expect(r.status).toBe(2);
    expect(refusal(r.stdout)).toContain(`error SG_ERR_USAGE: port ${port} on 127.0.0.1 is in use by another program`);
    expect(refusal(r.stdout)).toContain('--port');
  });
});
