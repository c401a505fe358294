// Token-to-key substitutions as Mono keeps them in machine.config (<strongNames><pubTokenMapping>).
// Mono builds its framework assemblies with Microsoft's tokens but signs them with its own key.
import { KeyError } from '../core/errors.js';
import { parsePublicKeyBlob } from './key-blob.js';
import { DEFAULT_KEY_MAP } from './strong-name.js';

/**
 * Reads `<map Token="…" PublicKey="…"/>` entries from a machine.config text into a key map for
 * VerifyOptions.keyMap. Entries it does not hold keep the default (ECMA key to platform key).
 * @throws KeyError SG_ERR_KEY_BAD_BLOB when a mapped key is not a valid public key blob
 */
export function parseMonoKeyMap(machineConfigXml: string): Map<string, Uint8Array> {
  const map = new Map(DEFAULT_KEY_MAP);
  const section = /<pubTokenMapping>([\s\S]*?)<\/pubTokenMapping>/i.exec(machineConfigXml)?.[1] ?? '';
  for (const m of section.matchAll(/<map\s+Token="([0-9a-fA-F]{16})"\s+PublicKey="([0-9a-fA-F]+)"\s*\/>/g)) {
    const key = Buffer.from(m[2]!, 'hex');
    try {
      parsePublicKeyBlob(key);
    } catch (cause) {
      throw new KeyError('SG_ERR_KEY_BAD_BLOB', `machine.config maps token ${m[1]} to an invalid public key`, { cause });
    }
    map.set(m[1]!.toLowerCase(), key);
  }
  return map;
}
