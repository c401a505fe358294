// The signing keys in PKCS#11 tokens as /readyz reports them: each option's key probed (a digest signed and verified
// with the option's public key) and the token's PIN counters, and the token events of the service's log.
import type { FastifyBaseLogger } from 'fastify';
import { isSignGateError, KeyError, type SignGateError } from '../../core/errors.js';
import type { TokenPinState } from '../../strongname/pkcs11/pin.js';
import { pkcs11PinState, type Pkcs11Event } from '../../strongname/pkcs11/session.js';
import { isPkcs11Key, probePkcs11Key, type Pkcs11KeyPair } from '../../strongname/pkcs11/signer.js';
import type { ServerConfig } from '../server-config.js';

/** The state of an option's key in a PKCS#11 token, as /readyz shows it (no token names, paths or PINs). */
export interface TokenKeyReadiness {
  readonly organization: string;
  readonly optionId: number;
  /** A key the option had before (previousKeys), which jobs accepted before the rotation still sign with. */
  readonly previous?: boolean;
  /** The token's user PIN counters, read without logging in; absent when the token cannot be reached. */
  readonly pin?: TokenPinState;
  /** True when the key signed a probe digest that verified with the option's configured public key. */
  readonly ready: boolean;
  /** Why not, when not: the error code (docs/errors.md). */
  readonly code?: string;
}

/** A readiness failure with the state of every key, for /readyz's answer. */
export class TokenKeysNotReady extends KeyError {
  constructor(
    code: SignGateError['code'],
    message: string,
    readonly details: { readonly tokenKeys: readonly TokenKeyReadiness[] },
  ) {
    super(code, message);
  }
}

/**
 * Proves every key in a PKCS#11 token of the configuration: its token's PIN counters are read (without logging in),
 * then the key signs a random digest in the module's owner (this thread) and the signature is verified with the
 * option's configured public key, each within `timeoutMs` (a module that does not answer makes the node not ready
 * rather than the probe hang). A key whose token went away and came back is found again on the way.
 * @throws TokenKeysNotReady (SG_ERR_PKCS11_*) naming every option whose key cannot sign, with every key's state
 */
export async function probeTokenKeys(config: ServerConfig, timeoutMs = 5_000): Promise<readonly TokenKeyReadiness[]> {
  const states: TokenKeyReadiness[] = [];
  const failures: { code: SignGateError['code']; message: string }[] = [];
  for (const org of config.organizations.values()) {
    // Each option's key, and the keys it had before (previousKeys): jobs accepted before a rotation still need them.
    const keys = org.licenses.flatMap((license) => [
      { license, key: license.key, previous: false },
      ...license.previous.map((p) => ({ license, key: p.key, previous: true })),
    ]);
    for (const { license, key, previous } of keys) {
      if (!isPkcs11Key(key)) continue;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new KeyError('SG_ERR_PKCS11_TOKEN', `the PKCS#11 key did not answer within ${timeoutMs / 1000} s`)), timeoutMs);
      });
      // The PIN counters after the probe: a token put back is found by then.
      const pin = () => {
        const state = pkcs11PinState((key as Pkcs11KeyPair).pkcs11);
        return state ? { pin: state } : {};
      };
      const which = { organization: org.id, optionId: license.optionId, ...(previous ? { previous: true } : {}) };
      try {
        await Promise.race([probePkcs11Key(key.pkcs11, key.publicKey), timeout]);
        states.push({ ...which, ...pin(), ready: true });
      } catch (error) {
        const code = isSignGateError(error) ? error.code : 'SG_ERR_PKCS11_TOKEN';
        states.push({ ...which, ...pin(), ready: false, code });
        failures.push({ code, message: `${previous ? 'a previous key of ' : ''}option ${license.optionId} of ${org.id}: ${(error as Error).message}` });
      } finally {
        clearTimeout(timer);
      }
    }
  }
  if (failures.length) throw new TokenKeysNotReady(failures[0]!.code, failures.map((f) => f.message).join('; '), { tokenKeys: states });
  return states;
}

/** Writes what the owner of the PKCS#11 modules did to the service's log (the PIN never is in an event). */
export function logPkcs11Event(log: FastifyBaseLogger, event: Pkcs11Event): void {
  switch (event.kind) {
    case 'pin-state': {
      const level = event.state === 'ok' ? 'info' : event.state === 'count-low' ? 'warn' : 'error';
      log[level](
        { pkcs11: event.uri, token: event.token, pin: event.state },
        event.state === 'ok'
          ? 'logging in to the PKCS#11 token'
          : event.state === 'count-low'
            ? 'the PKCS#11 token counted a wrong PIN: logging in with the configured PIN once'
            : `the PKCS#11 token's user PIN is ${event.state === 'locked' ? 'locked' : 'on its final try'}: not logging in`,
      );
      return;
    }
    case 'retry':
      log.warn({ pkcs11: event.uri, code: event.code, attempt: event.attempt }, 'PKCS#11 operation failed; trying again with a fresh session');
      return;
    case 'reinitialized':
      log.warn({ module: event.module }, 'PKCS#11 module initialized again (a token went away or the module lost its state)');
      return;
    case 'failed':
      log.error({ pkcs11: event.uri, code: event.code, err: { message: event.message } }, `PKCS#11 operation failed: ${event.code}`);
  }
}
