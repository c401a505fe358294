// One record key per deployment on PostgreSQL: the first node records its record key's public half in the database
// (signgate_record_key, one row); every node after it must sign checkpoints with that key. A node whose key differs
// refuses to start, naming both keys and what to do; a node without a key of its own never makes a second one
// while the database names the deployment's.
import { hostname } from 'node:os';
import type { Pool } from 'pg';
import { rmSync } from 'node:fs';
import { UsageError } from '../../../core/errors.js';
import { formatVerifierKey } from '../../../record/checkpoint.js';
import { createRecordKeyFile, publicKeyPathFor, readRecordKeyFile, recordKeyId, writeRecordPublicKey, type RecordKey } from '../../record-key.js';

/** The key the deployment signs with, as the database recorded it. */
export interface DeploymentRecordKey {
  readonly publicKey: string;
  readonly recordedAt: string;
  readonly recordedBy: string;
}

export async function deploymentRecordKey(pool: Pool): Promise<DeploymentRecordKey | undefined> {
  const { rows } = await pool.query<{ public_key: string; recorded_at: Date; recorded_by: string }>(
    'SELECT public_key, recorded_at, recorded_by FROM signgate_record_key WHERE id = 1',
  );
  const row = rows[0];
  return row && { publicKey: row.public_key, recordedAt: row.recorded_at.toISOString(), recordedBy: row.recorded_by };
}

const DOCS = 'docs/deploy.md, "One record key per deployment"';

/**
 * The record key this node signs with, agreed with the deployment's: `keyFile` (configured, or the data directory's
 * record-key.pem, which `mayCreate` lets the first node of a deployment make).
 * @throws UsageError SG_ERR_CONFIG when the node's key is not the deployment's, or it has none and may not make one
 */
export async function agreeOnRecordKey(pool: Pool, keyFile: string, mayCreate: boolean, where: string): Promise<RecordKey> {
  let recorded = await deploymentRecordKey(pool);
  const cure = `Give this node the deployment's record key: copy its file from a node that runs (its "recordKey" in server.json, or its data directory's record-key.pem) to ${keyFile}, or name it with "recordKey" in server.json or --record-key; then start the node again (${DOCS}).`;
  let made = false;
  let key: RecordKey;
  try {
    key = readRecordKeyFile(keyFile, cure);
  } catch (error) {
    if (!mayCreate || recorded) {
      if (recorded)
        throw new UsageError(
          `this node has no record key at ${keyFile}, and the database ${where} records the deployment's, ${recorded.publicKey.split('+').slice(0, 2).join('+')} (recorded by ${recorded.recordedBy} on ${recorded.recordedAt}); a node never makes a second key`,
          cure,
          'SG_ERR_CONFIG',
        );
      throw error;
    }
    made = createRecordKeyFile(keyFile);
    key = readRecordKeyFile(keyFile, cure);
  }
  const mine = formatVerifierKey(key.verifier);
  if (!recorded) {
    await pool.query('INSERT INTO signgate_record_key (id, public_key, recorded_by) VALUES (1, $1, $2) ON CONFLICT (id) DO NOTHING', [
      mine,
      `${hostname()} (${keyFile})`,
    ]);
    recorded = (await deploymentRecordKey(pool))!;
  }
  if (recorded.publicKey !== mine) {
    // A key this start made a moment ago lost the race to another node's: it never signed anything, and is removed.
    if (made) {
      rmSync(keyFile, { force: true });
      rmSync(publicKeyPathFor(keyFile), { force: true });
    }
    const theirs = recorded.publicKey.split('+').slice(0, 2).join('+');
    throw new UsageError(
      `${made ? "another node recorded the deployment's record key first" : `this node's record key ${recordKeyId(key.verifier)} (${keyFile}) is not the deployment's`}: the database ${where} records ${theirs} (recorded by ${recorded.recordedBy} on ${recorded.recordedAt}); every node of a deployment signs the record's checkpoints with one key, or clients refuse them as a key change`,
      cure,
      'SG_ERR_CONFIG',
    );
  }
  if (made) writeRecordPublicKey(key);
  return key;
}
