// The client against a hostile service on loopback: ids that look like paths, packages with duplicate or empty
// names, endless bodies, malformed answers, terminal escapes, a redirect from HTTPS to plain HTTP.
import { execFileSync } from 'node:child_process';
import type { ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { fixture, fixturePath, runCliAsync, clientWorkdir } from '../helpers/fixtures.js';
import { startStandIn, type StandIn, type StandInOptions } from '../helpers/stand-in-service.js';

const workdir = () => clientWorkdir('signgate-hostile-', TOKEN, 'work');

const KEY = fixturePath('test-keys/12345_public.snk');
const ADDIN_DLL = fixturePath('addin/SampleAddin.dll');
const TOKEN = 'sgt_hostile-test-token';

let service: StandIn | undefined;
afterEach(async () => {
  await service?.close();
  service = undefined;
});

const signArgs = (baseUrl: string, out: string, ...extra: string[]) => [
  'sign',
  ADDIN_DLL,
  '--vendor',
  'Contoso',
  '--key',
  KEY,
  '--base-url',
  baseUrl,
  '--destination-path',
  out,
  '--poll-interval',
  '20',
  ...extra,
];

async function run(options: StandInOptions, ...extra: string[]) {
  service = await startStandIn(options);
  const w = workdir();
  const r = await runCliAsync(signArgs(service.baseUrl, w.out, ...extra), { env: w.env });
  return { ...r, w };
}

describe('ids are untrusted', () => {
  test('a job id that looks like a path goes into URLs encoded and never into a path', async () => {
    const w = workdir();
    const victim = join(w.dir, 'victim');
    mkdirSync(victim, { recursive: true });
    writeFileSync(join(victim, 'important.zip'), 'precious');
    service = await startStandIn({
      idStyle: { id: '../../victim/important' },
      // The stand-in keeps the job under "1"; answer every request about the odd id from that job.
      intercept: (req) => {
        if (req.url?.includes('..%2F..%2Fvictim%2Fimportant')) req.url = req.url.replace('..%2F..%2Fvictim%2Fimportant', '1');
        return false;
      },
    });
    const r = await runCliAsync(signArgs(service.baseUrl, w.out, '--delete-afterwards'), { env: w.env });
    expect(r.status, r.stderr).toBe(0);
    expect(readFileSync(join(victim, 'important.zip'), 'utf8')).toBe('precious');
    expect(readdirSync(victim)).toEqual(['important.zip']);
    expect(service.seen.filter((s) => s.includes('victim')).every((s) => s.includes('..%2F..%2Fvictim%2Fimportant'))).toBe(true);
    expect(readdirSync(w.cache).filter((n) => n.endsWith('.zip'))).toEqual([]);
  });
});

describe('hostile result packages', () => {
  test('the same name twice (as Windows compares names): refused, nothing written', async () => {
    const r = await run({ packageEntries: (signed) => [...signed, { name: 'sampleaddin.DLL', data: Buffer.from('junk') }] });
    expect(r.status).toBe(3);
    expect(r.stderr).toContain('the same file on Windows');
    expect(existsSync(r.w.out)).toBe(false);
  });

  test.each([[''], ['.'], ['sub/./x.dll'], ['CON.dll'], ['a:b.dll']])('an entry %j after good ones: refused before the first write', async (bad) => {
    const r = await run({ packageEntries: (signed) => [...signed, { name: bad, data: Buffer.from('x') }] });
    expect(r.status).toBe(3);
    expect(r.stderr).toContain('nothing was extracted');
    expect(existsSync(r.w.out) ? readdirSync(r.w.out) : []).toEqual([]);
  });

  test('a file and a folder of one name: refused', async () => {
    const r = await run({ packageEntries: (signed) => [...signed, { name: 'a', data: Buffer.from('x') }, { name: 'A/b.dll', data: Buffer.from('y') }] });
    expect(r.status).toBe(3);
    expect(r.stderr).toContain('both as a file and as a folder');
  });

  test('files never uploaded are kept apart and reported, not mixed with the verified output', async () => {
    const r = await run(
      {
        packageEntries: (signed) => [
          ...signed,
          { name: 'Evil.dll', data: fixture('addin/SampleAddin.dll') },
          { name: 'sub/evil2.dll', data: Buffer.from('x') },
        ],
      },
      '--json',
    );
    expect(r.status, r.stderr).toBe(0);
    expect(readdirSync(r.w.out).sort()).toEqual(['SampleAddin.dll', 'from-service']);
    expect(JSON.parse(r.stdout).extras.sort()).toEqual([
      expect.stringMatching(/from-service\/Evil\.dll$/),
      expect.stringMatching(/from-service\/sub\/evil2\.dll$/),
    ]);
  });
});

/** A 200 answer that starts with `head` and never ends: it writes as fast as the client reads. */
function endless(res: ServerResponse, contentType: string, head: string, fill: number): void {
  res.writeHead(200, { 'content-type': contentType });
  res.write(Buffer.from(head, 'latin1'));
  const chunk = Buffer.alloc(1 << 20, fill);
  const pump = () => {
    while (res.write(chunk)) {
      // keep writing until the socket pushes back
    }
    res.once('drain', pump);
  };
  res.on('close', () => res.removeAllListeners('drain'));
  pump();
}

describe('bounded bodies', () => {
  test('a status body that never ends: refused after the cap, memory stays bounded', async () => {
    const r = await run({
      intercept: (req, res) => {
        if (!req.url?.endsWith('/status')) return false;
        endless(res, 'application/json', '{"processingFinished":true,"assemblies":[', 0x20);
        return true;
      },
    });
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(/more than \d+ bytes/);
  });

  test('a download that never ends: cut off at the cap, nothing left behind', async () => {
    const r = await run(
      {
        intercept: (req, res) => {
          if (!(req.method === 'GET' && /\/assemblies\/1$/.test(req.url ?? ''))) return false;
          endless(res, 'application/zip', 'PK\x03\x04', 0x41);
          return true;
        },
      },
      '--max-download-bytes',
      '5000000',
    );
    expect(r.status).toBe(3);
    expect(r.stderr).toContain('--max-download-bytes');
    expect(readdirSync(r.w.cache).filter((n) => !n.endsWith('.json'))).toEqual([]);
  });
});

describe('malformed answers and escapes', () => {
  test.each([
    ['assemblies: [1, null]', { processingFinished: true, assemblies: [1, null] }],
    ['fileName: null', { processingFinished: true, assemblies: [{ fileName: null, fileProcessingState: 'Signed' }] }],
    ['no processingFinished', { assemblies: [] }],
  ])('a status with %s: a clear error naming what was wrong', async (_name, body) => {
    const r = await run({ status: () => body });
    expect(r.status).toBe(3);
    expect(r.stderr).toContain('SG_ERR_HTTP_BAD_RESPONSE');
    expect(r.stderr).toContain('job status does not follow the API');
    expect(r.stderr).not.toContain('SG_ERR_INTERNAL');
  });

  test('escape sequences in what the service says never reach the terminal', async () => {
    const r = await run({
      status: (real) => ({
        ...real,
        assemblies: (real.assemblies as object[]).map((a) => ({
          ...a,
          messages: [{ dateTime: 'x', messageType: 'Info', message: '\u001b]0;pwned\u0007\u001b[2Jdone\u202e' }],
        })),
      }),
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('done');
    expect(r.stdout + r.stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f\u202e]/);
  });
});

describe('numeric options', () => {
  test('--timeout given twice: a usage error before anything is uploaded', async () => {
    const r = await run({}, '--timeout', '5', '--timeout', '6');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--timeout');
    expect(service!.uploads.length).toBe(0);
  });
});

describe('redirects', () => {
  test('an HTTPS download redirected to plain HTTP is refused', async () => {
    service = await startStandIn();
    const w = workdir();
    const certDir = join(w.dir, 'tls');
    mkdirSync(certDir);
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        join(certDir, 'key.pem'),
        '-out',
        join(certDir, 'cert.pem'),
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=DNS:localhost,IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    const plain = service;
    const tls = createHttpsServer({ key: readFileSync(join(certDir, 'key.pem')), cert: readFileSync(join(certDir, 'cert.pem')) }, (req, res) => {
      const target = `${plain.origin}${req.url}`;
      if (req.method === 'GET' && /\/assemblies\/1$/.test(req.url ?? '')) return res.writeHead(302, { location: target }).end();
      // Everything else is forwarded to the plain stand-in.
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        const answer = await fetch(target, {
          method: req.method!,
          headers: req.headers as Record<string, string>,
          ...(chunks.length ? { body: Buffer.concat(chunks) } : {}),
        });
        res.writeHead(answer.status, Object.fromEntries(answer.headers));
        res.end(Buffer.from(await answer.arrayBuffer()));
      });
    });
    await new Promise<void>((r) => tls.listen(0, '127.0.0.1', r));
    try {
      const base = `https://localhost:${(tls.address() as { port: number }).port}/assembly-signing/v1.0`;
      const r = await runCliAsync(signArgs(base, w.out), { env: { ...w.env, NODE_EXTRA_CA_CERTS: join(certDir, 'cert.pem') } });
      expect(r.status).toBe(3);
      expect(r.stderr).toContain('SG_ERR_HTTP_INSECURE');
      expect(r.stderr).toContain('not HTTPS');
      expect(plain.seen.some((s) => /^GET \S+\/assemblies\/1$/.test(s))).toBe(false);
    } finally {
      await new Promise<void>((r) => {
        tls.closeAllConnections();
        tls.close(() => r());
      });
    }
  });
});
