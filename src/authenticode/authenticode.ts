// One file's Authenticode signatures: read from the certificate table, each image hash compared with the file,
// each PKCS#7 signature verified with its signer certificate; chain trust only on request, reported apart.
import { X509Certificate } from 'node:crypto';
import { FormatError, isSignGateError, SignGateError } from '../core/errors.js';
import type { PeImage } from '../pe/pe-image.js';
import { parseBer, scanBer } from './ber-guard.js';
import { parseCertificateTable, WIN_CERT_TYPE_PKCS_SIGNED_DATA, type CertificateTable } from './certificate-table.js';
import { derAt } from './der.js';
import { computeAuthenticodeImageHash } from './image-hash.js';
import { DEFAULT_AUTHENTICODE_LIMITS, type AuthenticodeLimits } from './limits.js';
import { chainTrust, type AuthenticodeTrust } from './chain.js';
import { hexUpper, parseSignedData, type AuthenticodeCertificate, type AuthenticodeTimestamp, type ParsedSignature } from './signed-data.js';
import { digestName } from './signer-check.js';

export type { AuthenticodeTrust } from './chain.js';

export interface AuthenticodeSignatureInfo {
  /** Certificate table entry the signature came from. */
  readonly entry: number;
  /** 0 for the entry's own signature, 1 for one nested in it (signtool /as, osslsigncode -nest). */
  readonly nesting: number;
  readonly digestAlgorithm: string;
  /** The image hash the signature covers, upper-case hex. */
  readonly signedImageHash: string;
  /** The image hash of the file with the same digest, or null when the digest is not supported. */
  readonly computedImageHash: string | null;
  readonly imageHashMatches: boolean;
  readonly signatureAlgorithm: string;
  readonly signatureValid: boolean;
  readonly signer: AuthenticodeCertificate | null;
  readonly certificates: readonly AuthenticodeCertificate[];
  readonly claimedSigningTime: string | null;
  readonly timestamp: AuthenticodeTimestamp | null;
  readonly programName: string | null;
  /** Image hash and signature both good. */
  readonly valid: boolean;
  /** Why not valid, in words; null when valid. */
  readonly problem: string | null;
  /** Present only when a trust store was given. */
  readonly trust?: AuthenticodeTrust;
}

export type AuthenticodeState = 'absent' | 'valid' | 'invalid' | 'unreadable';

export interface AuthenticodeInfo {
  /**
   * `absent`: no certificate table; `valid`: every signature's image hash matches the file and every signature verifies;
   * `invalid`: a signature or hash does not; `unreadable`: the table or a signature is malformed (see `error`).
   */
  readonly state: AuthenticodeState;
  readonly table: { readonly fileOffset: number; readonly size: number; readonly bytesAfterTable: number } | null;
  readonly entries: ReadonlyArray<{
    readonly index: number;
    readonly fileOffset: number;
    readonly length: number;
    readonly revision: number;
    readonly certificateType: number;
  }>;
  /** Every signature, outermost first, nested ones after the signature that carries them. */
  readonly signatures: readonly AuthenticodeSignatureInfo[];
  /** The primary signature's signer subject (the publisher), or null. */
  readonly publisher: string | null;
  /** The first problem, in words; null when valid or absent. */
  readonly reason: string | null;
  readonly error: { readonly code: string; readonly message: string; readonly fileOffset?: number } | null;
  /** Whether the chain to a trusted root was asked for and found for every signature (null when not asked). */
  readonly trusted: boolean | null;
}

export interface AuthenticodeOptions {
  readonly limits?: Partial<AuthenticodeLimits>;
  /** Certificates to trust (roots or intermediates); chain trust is reported apart from validity. */
  readonly trustStore?: readonly X509Certificate[];
  /** Time at which certificates must be valid for trust (default: the timestamp, else now). */
  readonly now?: Date;
}

/**
 * Reads the PEM certificates of a trust store file.
 * @throws SignGateError SG_ERR_AC_TRUST_STORE when the text holds no readable certificate
 */
export function parseTrustStore(pem: string, name = 'trust store'): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  const certs: X509Certificate[] = [];
  for (const [i, block] of blocks.entries()) {
    try {
      certs.push(new X509Certificate(block));
    } catch (error) {
      throw new SignGateError(
        'SG_ERR_AC_TRUST_STORE',
        `${name}: certificate ${i + 1} cannot be read (${error instanceof Error ? error.message : String(error)})`,
        { cause: error },
      );
    }
  }
  if (certs.length === 0) throw new SignGateError('SG_ERR_AC_TRUST_STORE', `${name} holds no -----BEGIN CERTIFICATE----- block`);
  return certs;
}

/** Above this many elements a blob goes through asn1js whole (real signatures: about 2,300 of its nodes at most). */
const ASN1JS_WHOLE_PARSE_ELEMENTS = 4_000;

function errorOf(error: unknown): { code: string; message: string; fileOffset?: number } {
  if (!isSignGateError(error)) throw error;
  const fileOffset = (error as { fileOffset?: number }).fileOffset;
  return fileOffset !== undefined && fileOffset >= 0 ? { code: error.code, message: error.message, fileOffset } : { code: error.code, message: error.message };
}

function describeSignature(
  image: PeImage,
  entry: number,
  sig: ParsedSignature,
  hashes: Map<string, string>,
  options: AuthenticodeOptions,
  limits: AuthenticodeLimits,
): AuthenticodeSignatureInfo {
  const digest = digestName(sig.digestAlgorithmOid);
  let computed: string | null = null;
  if (digest) {
    computed = hashes.get(digest) ?? hexUpper(computeAuthenticodeImageHash(image, digest));
    hashes.set(digest, computed);
  }
  const signed = hexUpper(sig.signedImageHash);
  const imageHashMatches = computed === signed;
  const problem = !digest
    ? `unsupported image hash algorithm ${sig.digestAlgorithmOid}`
    : !imageHashMatches
      ? `the file's ${digest} image hash ${computed} differs from the signed ${signed}: the file changed after Authenticode signing`
      : sig.signatureProblem;
  const info: AuthenticodeSignatureInfo = {
    entry,
    nesting: sig.nesting,
    digestAlgorithm: sig.digestAlgorithm,
    signedImageHash: signed,
    computedImageHash: computed,
    imageHashMatches,
    signatureAlgorithm: sig.signatureAlgorithm,
    signatureValid: sig.signatureValid,
    signer: sig.signer,
    certificates: sig.certificates,
    claimedSigningTime: sig.claimedSigningTime,
    timestamp: sig.timestamp,
    programName: sig.programName,
    valid: imageHashMatches && sig.signatureValid,
    problem: imageHashMatches && sig.signatureValid ? null : problem,
  };
  if (!options.trustStore) return info;
  const at = options.now ?? (sig.timestamp?.verified ? new Date(sig.timestamp.time) : new Date());
  return { ...info, trust: chainTrust(sig, options.trustStore, at, limits.maxChainLength) };
}

/**
 * Reads and verifies the Authenticode signatures of a PE image. Never throws for malformed input: a damaged
 * table or signature gives state `unreadable` with a typed `error`.
 */
export function readAuthenticode(image: PeImage, options: AuthenticodeOptions = {}): AuthenticodeInfo {
  const limits = { ...DEFAULT_AUTHENTICODE_LIMITS, ...options.limits };
  const none = { table: null, entries: [], signatures: [], publisher: null, reason: null, error: null, trusted: null };
  let table: CertificateTable | null;
  try {
    table = parseCertificateTable(image, limits);
  } catch (error) {
    const e = errorOf(error);
    return { ...none, state: 'unreadable', reason: e.message, error: e };
  }
  if (!table) return { ...none, state: 'absent' };
  const tableInfo = { fileOffset: table.fileOffset, size: table.size, bytesAfterTable: table.bytesAfterTable };
  const entries = table.entries.map(({ index, fileOffset, length, revision, certificateType }) => ({ index, fileOffset, length, revision, certificateType }));
  const base = { ...none, table: tableInfo, entries };
  const signatures: AuthenticodeSignatureInfo[] = [];
  const hashes = new Map<string, string>();
  const count = { value: 0 };
  try {
    for (const entry of table.entries) {
      const origin = { structure: `certificate table entry ${entry.index}`, fileOffset: entry.fileOffset + 8 };
      if (entry.certificateType !== WIN_CERT_TYPE_PKCS_SIGNED_DATA) {
        throw new FormatError('SG_ERR_AC_BAD_SIGNATURE', `${origin.structure} has wCertificateType ${entry.certificateType}, not PKCS_SIGNED_DATA (2)`, {
          structure: origin.structure,
          fileOffset: entry.fileOffset + 6,
        });
      }
      // A plain Uint8Array view: views of a Buffer are made through its species constructor, several times slower.
      const data = new Uint8Array(entry.data.buffer, entry.data.byteOffset, entry.data.length);
      let parsed: ParsedSignature[];
      try {
        const scanned = { elements: 0 };
        const end = scanBer(data, origin, limits, scanned);
        // asn1js reads at most 10,000 elements (embedded ones counted): a blob near that is read whole first, as it was.
        if (scanned.elements > ASN1JS_WHOLE_PARSE_ELEMENTS) parseBer(data, origin, limits);
        parsed = parseSignedData(derAt(data.subarray(0, end)), { origin, limits, count });
      } catch (caught) {
        // asn1js used to read the whole blob before anything else: where it refuses the blob, that is still the error.
        let error = caught;
        try {
          parseBer(data, origin, limits);
        } catch (whole) {
          error = whole;
        }
        if (isSignGateError(error)) throw error;
        // pkijs, asn1js or node:crypto refused a value the structure checks let through (a date out of range, ...).
        throw new FormatError(
          'SG_ERR_AC_BAD_SIGNATURE',
          `${origin.structure}: a value cannot be read (${error instanceof Error ? error.message : String(error)})`,
          origin,
          { cause: error },
        );
      }
      for (const sig of parsed) signatures.push(describeSignature(image, entry.index, sig, hashes, options, limits));
    }
  } catch (error) {
    const e = errorOf(error);
    return { ...base, signatures, state: 'unreadable', reason: e.message, error: e };
  }
  if (signatures.length === 0) return { ...base, state: 'invalid', reason: 'the certificate table holds no signature' };
  const bad = signatures.find((s) => !s.valid);
  const after = table.bytesAfterTable > 0 ? `${table.bytesAfterTable} bytes follow the certificate table; Authenticode covers none of them` : null;
  const trusted = options.trustStore ? signatures.every((s) => s.trust?.trusted) : null;
  return {
    ...base,
    signatures,
    publisher: signatures[0]!.signer?.subject ?? null,
    state: bad || after ? 'invalid' : 'valid',
    reason: bad ? `${bad.nesting > 0 ? 'nested signature: ' : ''}${bad.problem}` : after,
    trusted,
  };
}
