// A name resolver the test controls, preloaded into a CLI process (node --import): dns.lookup answers from the table
// in SIGNGATE_TEST_RESOLVER (a JSON object: name -> an address, or an error code such as ENOTFOUND or EAI_AGAIN) and
// fails every other name with ENOTFOUND, so a test never sends a query to the machine's resolver. Literal addresses
// never reach dns.lookup (net connects to them directly). test/helpers/fixtures.ts controlledResolver() sets it up.
import dns from 'node:dns';
import { isIP } from 'node:net';

const table = JSON.parse(process.env.SIGNGATE_TEST_RESOLVER ?? '{}');

function failure(code, host) {
  const errno = { ENOTFOUND: -3008, EAI_AGAIN: -3001 }[code] ?? -3008;
  return Object.assign(new Error(`getaddrinfo ${code} ${host}`), { code, errno, syscall: 'getaddrinfo', hostname: host });
}

function answer(host, options) {
  const name = String(host).toLowerCase();
  const entry = Object.hasOwn(table, name) ? table[name] : 'ENOTFOUND';
  const family = isIP(entry);
  if (family === 0) return { error: failure(entry, host) };
  if (options.family && options.family !== family) return { error: failure('ENOTFOUND', host) };
  return { address: entry, family };
}

dns.lookup = function lookup(host, options, callback) {
  const cb = typeof options === 'function' ? options : callback;
  const opts = typeof options === 'object' && options !== null ? options : { family: typeof options === 'number' ? options : 0 };
  const result = answer(host, opts);
  process.nextTick(() => {
    if (result.error) cb(result.error);
    else if (opts.all) cb(null, [{ address: result.address, family: result.family }]);
    else cb(null, result.address, result.family);
  });
  return {};
};
dns.promises.lookup = (host, options = {}) =>
  new Promise((resolve, reject) =>
    dns.lookup(host, options, (error, address, family) => (error ? reject(error) : resolve(Array.isArray(address) ? address : { address, family }))),
  );
