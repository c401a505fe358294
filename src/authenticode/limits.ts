// Bounds on the work done for a certificate table: a hostile file must not cost more than a real one.

/** Limits for reading Authenticode signatures; real signatures stay far below each. */
export interface AuthenticodeLimits {
  /** Bytes of the whole certificate table (data directory 4). */
  readonly maxTableBytes: number;
  /** WIN_CERTIFICATE entries in the table. */
  readonly maxEntries: number;
  /** Signatures in all, counting nested ones (1.3.6.1.4.1.311.2.4.1) and every entry. */
  readonly maxSignatures: number;
  /** Nesting of constructed ASN.1 elements. */
  readonly maxAsn1Depth: number;
  /** ASN.1 elements per parsed blob. */
  readonly maxAsn1Elements: number;
  /** Certificates in a chain built for --trust-store. */
  readonly maxChainLength: number;
}

export const DEFAULT_AUTHENTICODE_LIMITS: AuthenticodeLimits = {
  maxTableBytes: 4 * 1024 * 1024,
  maxEntries: 16,
  maxSignatures: 8,
  maxAsn1Depth: 64,
  maxAsn1Elements: 200_000,
  maxChainLength: 10,
};
