// Secrets in text: what looks like an access token, and the one place that masks a known secret (and the forms it
// takes when a peer encodes it) before text a peer sent us is printed, reported or stored.

/**
 * signgate's own token format: `sgt_` and 32 random bytes in base64url (src/server/domain/tokens.ts), not inside a
 * longer word (`msgt_handler_…` is no token).
 */
const OUR_TOKEN = /(?<![A-Za-z0-9_-])sgt_[A-Za-z0-9_-]{20,}/;
/** A JSON Web Token: base64url header `{"` and payload, then a signature part (possibly empty). */
const JWT = /eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/;

/** The mark that stands in for a secret in anything we print or store. */
export const SECRET_MARK = '[token]';

/** True when `text` holds something shaped like an access token: one of ours, or a JWT. */
export function looksLikeToken(text: string): boolean {
  return OUR_TOKEN.test(text) || JWT.test(text);
}

/**
 * Every form of `secret` a peer may echo: as written; hex in either case; base64 and base64url whole, and at each
 * of the three byte alignments it can have inside a longer encoded text (`base64("Bearer " + token)` holds the
 * token's bytes one byte off), less the groups of four characters it shares with its neighbours there.
 */
export function secretForms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const forms = [
    secret,
    bytes.toString('hex'),
    bytes.toString('hex').toUpperCase(),
    bytes.toString('base64'),
    bytes.toString('base64').replace(/=+$/, ''),
    bytes.toString('base64url'),
  ];
  for (const shift of [0, 1, 2]) {
    const shifted = Buffer.concat([Buffer.alloc(shift), bytes]);
    for (const encoding of ['base64', 'base64url'] as const) forms.push(shifted.toString(encoding).slice(shift === 0 ? 0 : 4, -4));
  }
  // A form that is too short would mask ordinary words; a real token is never that short.
  return [...new Set(forms)].filter((f) => f.length >= 12).sort((a, b) => b.length - a.length);
}

/** Shortest piece of a secret that is masked on its own: a token cut in two by a line break or a space. */
export const SECRET_PIECE = 12;

/** `text` with every run of SECRET_PIECE or more characters that also stands in `secret` replaced by SECRET_MARK. */
function maskPieces(text: string, secret: string): string {
  if (text.length < SECRET_PIECE || secret.length < SECRET_PIECE) return text;
  const offsets = new Map<string, number>();
  for (let o = 0; o + SECRET_PIECE <= secret.length; o++)
    if (!offsets.has(secret.slice(o, o + SECRET_PIECE))) offsets.set(secret.slice(o, o + SECRET_PIECE), o);
  let out = '';
  let copied = 0;
  for (let i = 0; i + SECRET_PIECE <= text.length; ) {
    const o = offsets.get(text.slice(i, i + SECRET_PIECE));
    if (o === undefined) {
      i++;
      continue;
    }
    let end = i + SECRET_PIECE;
    for (let k = o + SECRET_PIECE; end < text.length && k < secret.length && text[end] === secret[k]; k++) end++;
    out += text.slice(copied, i) + SECRET_MARK;
    copied = i = end;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The secrets this process holds (the access token it sends), each as a pattern of all its forms. */
const remembered = new Map<string, RegExp>();

/**
 * Remembers a secret this process uses (the access token once it is read), so that maskSecrets and
 * maskRemembered replace it wherever text leaves the process.
 */
export function rememberSecret(secret: string | undefined): void {
  if (!secret || remembered.has(secret)) return;
  const forms = secretForms(secret);
  if (forms.length > 0) remembered.set(secret, new RegExp(forms.map(escapeRegExp).join('|'), 'g'));
}

/** `text` with every remembered secret, in every form, replaced by SECRET_MARK; the same string when none is. */
export function maskRemembered(text: string): string {
  let out = text;
  for (const pattern of remembered.values()) out = out.replace(pattern, SECRET_MARK);
  return out;
}

/**
 * `text` with every form of each remembered secret (secretForms), and anything shaped like a token, replaced by
 * SECRET_MARK. Service text goes through this before it is printed, reported or stored: a service or a proxy
 * in front of it may echo the Authorization header it was sent.
 */
export function maskSecrets(text: string): string {
  let out = text;
  for (const secret of remembered.keys()) out = maskPieces(out, secret);
  return maskRemembered(out).replace(new RegExp(OUR_TOKEN.source, 'g'), SECRET_MARK).replace(new RegExp(JWT.source, 'g'), SECRET_MARK);
}

/**
 * A URL for a message: without its user and password, and, when it cannot be parsed, by its scheme alone.
 * Never echoes userinfo, whatever the input.
 */
export function urlForMessage(text: string): string {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(text)?.[1];
  const opaque = scheme ? `${scheme}: (rest not shown)` : '(not a URL; not shown)';
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return opaque;
  }
  // `postgres:user:PW@host/db` parses with no host and the password in its path: show none of it.
  if (!url.host) return opaque;
  url.username = '';
  url.password = '';
  return url.href;
}
