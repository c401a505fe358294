// Keys in a PKCS#11 token are named by RFC 7512 `pkcs11:` URIs: which token, which key, which module, where the PIN
// is (never the PIN itself). Parsing and showing them; the environment's defaults for what a URI leaves out.
import { isAbsolute } from 'node:path';
import { KeyError } from '../../core/errors.js';

/** Where the PIN comes from when the URI names no `pin-source`. */
export const PKCS11_PIN_ENV = 'SIGNGATE_PKCS11_PIN';
/** Where the module path comes from when the URI names no `module-path`. */
export const PKCS11_MODULE_ENV = 'SIGNGATE_PKCS11_MODULE';

/** The environment's variables: where the module path and the PIN come from when the URI names none. */
export type Env = Readonly<Record<string, string | undefined>>;

/** A parsed `pkcs11:` URI (RFC 7512): which token, which key, which module, where the PIN is. */
export interface Pkcs11Uri {
  /** The URI as given (it never holds a PIN: `pin-value` is refused). */
  readonly text: string;
  /** Token attributes (CK_TOKEN_INFO): `token` is the label. Absent ones match any token. */
  readonly token?: string;
  readonly manufacturer?: string;
  readonly serial?: string;
  readonly model?: string;
  readonly slotId?: number;
  /** The key's CKA_LABEL (`object=`). */
  readonly object?: string;
  /** The key's CKA_ID (`id=`, percent-encoded bytes). */
  readonly id?: Uint8Array;
  /** The module (`module-path=`), else SIGNGATE_PKCS11_MODULE. */
  readonly modulePath?: string;
  /** `pin-source=`: `file:<path>` (or a plain absolute path), or `env:<NAME>`; else SIGNGATE_PKCS11_PIN. */
  readonly pinSource?: string;
}

const PATH_ATTRIBUTES = new Set([
  'token',
  'manufacturer',
  'serial',
  'model',
  'slot-id',
  'object',
  'id',
  'type',
  'library-manufacturer',
  'library-description',
  'library-version',
  'slot-description',
  'slot-manufacturer',
]);
const QUERY_ATTRIBUTES = new Set(['module-path', 'module-name', 'pin-source', 'pin-value']);

export function uriError(text: string, problem: string, hint = ''): KeyError {
  return new KeyError('SG_ERR_PKCS11_URI', `${showUri(text)}: ${problem}${hint ? `. ${hint}` : ''}`);
}

/** The URI for messages: a `pin-value` it should not carry is not shown. */
export function showUri(text: string): string {
  return text.replace(/([?&;]pin-value=)[^&]*/gi, '$1(not shown)');
}

/** True for a key argument or `keyPair` that names a key in a token rather than a file. */
export function isPkcs11Uri(text: string): boolean {
  return /^pkcs11:/i.test(text);
}

function decodeValue(text: string, name: string, value: string): Uint8Array {
  if (/%(?![0-9a-f]{2})/i.test(value)) throw uriError(text, `the value of ${name} has a % that is not followed by two hex digits`);
  const bytes: number[] = [];
  for (let i = 0; i < value.length; ) {
    if (value[i] === '%') {
      bytes.push(parseInt(value.slice(i + 1, i + 3), 16));
      i += 3;
    } else {
      const c = value.codePointAt(i)!;
      bytes.push(...Buffer.from(String.fromCodePoint(c), 'utf8'));
      i += c > 0xffff ? 2 : 1;
    }
  }
  return Uint8Array.from(bytes);
}

/**
 * Parses an RFC 7512 `pkcs11:` URI naming an RSA private key: path attributes (`token`, `serial`, `object`,
 * `id`, …) separated by `;`, query attributes (`module-path`, `pin-source`) after `?`, separated by `&`.
 * @throws KeyError SG_ERR_PKCS11_URI naming what is wrong (a `pin-value` is refused and never shown)
 */
export function parsePkcs11Uri(text: string): Pkcs11Uri {
  if (!isPkcs11Uri(text)) throw uriError(text, 'a PKCS#11 key URI starts with pkcs11:');
  const [path = '', query, ...more] = text.slice('pkcs11:'.length).split('?');
  if (more.length) throw uriError(text, 'the URI has more than one ?');
  const attributes = new Map<string, string>();
  const take = (part: string, allowed: Set<string>, where: string) => {
    if (part === '') return;
    const at = part.indexOf('=');
    const name = (at < 0 ? part : part.slice(0, at)).toLowerCase();
    if (at < 0) throw uriError(text, `the ${where} attribute ${JSON.stringify(name)} has no value`, 'Write it as name=value.');
    if (!allowed.has(name) && !name.startsWith('x-')) {
      throw uriError(text, `${JSON.stringify(name)} is not a ${where} attribute of RFC 7512`, `Known: ${[...allowed].join(', ')}.`);
    }
    if (attributes.has(name)) throw uriError(text, `${name} is given twice`);
    attributes.set(name, part.slice(at + 1));
  };
  for (const part of path.split(';')) take(part, PATH_ATTRIBUTES, 'path');
  for (const part of (query ?? '').split('&')) take(part, QUERY_ATTRIBUTES, 'query');
  if (attributes.has('pin-value')) {
    throw uriError(
      text,
      'the URI carries the PIN (pin-value)',
      `A URI shows in configuration files, process lists and logs: put the PIN in a file only the service's user can read (pin-source=file:/path) or in ${PKCS11_PIN_ENV}.`,
    );
  }
  if (attributes.has('module-name') && !attributes.has('module-path')) {
    throw uriError(text, 'module-name is not looked up', `Name the module file: module-path=/usr/lib/softhsm/libsofthsm2.so (or set ${PKCS11_MODULE_ENV}).`);
  }
  const type = attributes.get('type');
  if (type !== undefined && type !== 'private')
    throw uriError(text, `type=${type} names no private key`, 'Sign with the private key: leave type out or write type=private.');
  const string = (name: string) => {
    const value = attributes.get(name);
    return value === undefined ? undefined : Buffer.from(decodeValue(text, name, value)).toString('utf8');
  };
  const slot = attributes.get('slot-id');
  if (slot !== undefined && !/^\d+$/.test(slot)) throw uriError(text, `slot-id=${slot} is not a decimal number`);
  const id = attributes.get('id');
  const object = string('object');
  if (object === undefined && id === undefined) throw uriError(text, 'the URI names no key', 'Add object=<key label> or id=<key id as %xx bytes>.');
  const parsed: Pkcs11Uri = {
    text,
    ...(string('token') !== undefined ? { token: string('token')! } : {}),
    ...(string('manufacturer') !== undefined ? { manufacturer: string('manufacturer')! } : {}),
    ...(string('serial') !== undefined ? { serial: string('serial')! } : {}),
    ...(string('model') !== undefined ? { model: string('model')! } : {}),
    ...(slot !== undefined ? { slotId: Number(slot) } : {}),
    ...(object !== undefined ? { object } : {}),
    ...(id !== undefined ? { id: decodeValue(text, 'id', id) } : {}),
    ...(string('module-path') !== undefined ? { modulePath: string('module-path')! } : {}),
    ...(string('pin-source') !== undefined ? { pinSource: string('pin-source')! } : {}),
  };
  if (parsed.modulePath !== undefined && !isAbsolute(parsed.modulePath))
    throw uriError(text, `module-path ${parsed.modulePath} is not an absolute path`, 'Name the module file by its absolute path.');
  return parsed;
}

export function describeToken(uri: Pkcs11Uri): string {
  const parts = [
    uri.token !== undefined ? `token "${uri.token}"` : '',
    uri.serial !== undefined ? `serial ${uri.serial}` : '',
    uri.slotId !== undefined ? `slot ${uri.slotId}` : '',
  ].filter(Boolean);
  return parts.length ? parts.join(', ') : 'any token';
}

export function describeKey(uri: Pkcs11Uri): string {
  return [uri.object !== undefined ? `label "${uri.object}"` : '', uri.id !== undefined ? `id ${Buffer.from(uri.id).toString('hex')}` : '']
    .filter(Boolean)
    .join(' and ');
}
