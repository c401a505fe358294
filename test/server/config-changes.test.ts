// What a reload logs: configChanges names ids, roles, limits and public key tokens, never a key's path or a secret,
// and says which settings wait for the next start.
import { expect, test } from 'vitest';
import { configChanges } from '../../src/server/server-config.js';
import { sandboxConfig } from '../helpers/server.js';

test('nothing changed: no line', () => {
  expect(configChanges(sandboxConfig(), sandboxConfig())).toEqual([]);
});

test("an option's new key by its public key tokens; organizations, users and options added and removed; settings read at start", () => {
  const before = sandboxConfig();
  const after = sandboxConfig((c) => {
    const sandbox = c.organizations[0]!;
    sandbox.licenses[0]!.keyPair = '../test-keys/67890_keypair.snk';
    sandbox.licenses.pop();
    sandbox.licenses.push({ optionId: 44444, keyPair: '../test-keys/other_keypair.snk' });
    sandbox.users.push({ id: 'ops', roles: ['Operator'] });
    c.organizations = c.organizations.filter((o) => o.id !== 'unlicensed');
    c.signingWorkers = 3;
  });
  const token = (config: typeof before, option: number) => config.organizations.get('sandbox')!.licenses.find((l) => l.optionId === option)!.token;
  const changes = configChanges(before, after);
  expect(changes).toEqual([
    'signingWorkers: unset -> 3 (read at start: applies at the next start)',
    'organizations removed: unlicensed',
    'sandbox: options added: 44444',
    'sandbox: options removed: 67890',
    `sandbox: option 12345's key: public key token ${token(before, 12345)} -> ${token(after, 12345)}`,
    'sandbox: users added: ops',
  ]);
  expect(changes.join('\n')).not.toMatch(/keypair|\.snk|\//);
});
