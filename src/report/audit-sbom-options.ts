// The options of the release's bill of materials, apart from its writer (audit-sbom.ts), which loads the CycloneDX library.
export const SbomSpecVersions = ['1.6', '1.7'] as const;
export type SbomSpecVersion = (typeof SbomSpecVersions)[number];

/** Who made the SBOM (the guideline requires an e-mail address or a URL), and the primary component's overrides. */
export interface SbomOptions {
  readonly creatorUrl?: string | undefined;
  readonly creatorEmail?: string | undefined;
  /** The organization's name beside its URL or e-mail address (default: the audit's vendor). */
  readonly creatorName?: string | undefined;
  /** The add-in's name and version (default: the project a deps.json names, else the first assembly that needs signing). */
  readonly name?: string | undefined;
  readonly version?: string | undefined;
  /** The licence (SPDX expression or LicenseRef-…) of the files no package brought: the vendor's own. */
  readonly license?: string | undefined;
  /** Where the vendor's source code is (URI), and where the release is downloaded from. */
  readonly sourceUri?: string | undefined;
  readonly downloadUri?: string | undefined;
  /** CycloneDX version (default 1.6: the guideline's minimum, read by every current tool). */
  readonly specVersion?: SbomSpecVersion | undefined;
}
