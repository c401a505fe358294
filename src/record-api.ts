// `signgate/record`: the signature record's format (docs/deploy.md#the-signature-record), apart from the service
// that keeps one: its entries and their hash chain, the Merkle tree of RFC 9162 over them, signed checkpoints
// (C2SP signed notes) and whether a record continues a saved checkpoint. The service's own record (data directory or
// PostgreSQL) and its key are in `signgate/server`; `readSignatureRecord` of `signgate` reads a record file for audit.

export {
  ChainChecker,
  chainEvents,
  entryHash,
  entryLine,
  verifyChain,
  verifyRecordText,
  EMPTY_HEAD,
  GENESIS_HASH,
  type SignatureEvent,
  type SignatureEntry,
  type ChainHead,
  type RecordBreak,
  type RecordVerification,
} from './record/signature-record.js';
export { leafHash, nodeHash, rootHash, inclusionProof, consistencyProof, verifyInclusion, verifyConsistency, type Hash } from './record/merkle.js';
export {
  entryLeaf,
  signCheckpoint,
  parseCheckpoint,
  formatVerifierKey,
  parseVerifierKey,
  recordPublicKey,
  type Checkpoint,
  type TreeHead,
  type RecordVerifier,
} from './record/checkpoint.js';
/** A record public key given as a file (read from disk), or as the verifier key's text itself. */
export { readRecordPublicKey } from './workflows/keys.js';
export { continuationProblem } from './record/record-continuation.js';
