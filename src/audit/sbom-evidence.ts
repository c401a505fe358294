// What a software bill of materials needs of each file beyond the audit's evidence, read in the same per-file step
// from the same bytes (this thread or a worker): the SHA-512, the assembly references with their identities and the
// version attributes. Plain data.
import { createHash } from 'node:crypto';
import { isSignGateError } from '../core/errors.js';
import { formatVersion } from '../metadata/module-metadata.js';
import { referenceToken } from '../strongname/key-token.js';
import type { FileFacts } from '../rules/types.js';

/** An assembly reference as the SBOM matches it to the files that satisfy it. */
export interface SbomReference {
  readonly name: string;
  readonly version: string;
  readonly culture: string;
  /** Lower-case hex; null when the reference names no public key. */
  readonly publicKeyToken: string | null;
}

/** A file's evidence for the SBOM: its SHA-512, and for an assembly its references and version attributes. */
export interface SbomFileEvidence {
  readonly sha512: string;
  readonly references: readonly SbomReference[];
  /** AssemblyFileVersionAttribute's value, or null. */
  readonly fileVersion: string | null;
  /** AssemblyInformationalVersionAttribute's value, or null. */
  readonly informationalVersion: string | null;
}

/** The SHA-256 and SHA-512 of bytes, hex: the hashes the audit and the SBOM give of every file. */
export function fileDigests(bytes: Uint8Array): { readonly sha256: string; readonly sha512: string } {
  return { sha256: createHash('sha256').update(bytes).digest('hex'), sha512: createHash('sha512').update(bytes).digest('hex') };
}

const VERSION_ATTRIBUTES = {
  'System.Reflection.AssemblyFileVersionAttribute': 'fileVersion',
  'System.Reflection.AssemblyInformationalVersionAttribute': 'informationalVersion',
} as const;

/** The file's SHA-512, references and version attributes; an attribute that cannot be decoded is left out. */
export function sbomEvidence(f: FileFacts): SbomFileEvidence {
  const sha512 = createHash('sha512').update(f.input.bytes).digest('hex');
  const module = f.module;
  if (!module) return { sha512, references: [], fileVersion: null, informationalVersion: null };
  const versions: { fileVersion: string | null; informationalVersion: string | null } = { fileVersion: null, informationalVersion: null };
  let references: SbomReference[] = [];
  try {
    references = module.assemblyReferences.map((r) => ({
      name: r.name,
      version: formatVersion(r.version),
      culture: r.culture,
      publicKeyToken: referenceToken(r.publicKeyOrToken, r.flags),
    }));
    for (const attribute of module.assemblyAttributes) {
      const key = VERSION_ATTRIBUTES[attribute.typeName as keyof typeof VERSION_ATTRIBUTES];
      if (!key) continue;
      try {
        const value = module.decodeAttribute(attribute).fixedArguments[0]?.value;
        if (typeof value === 'string') versions[key] = value;
      } catch (error) {
        if (!isSignGateError(error)) throw error;
      }
    }
  } catch (error) {
    // The audit already reports a file whose metadata cannot be read (SG001); the SBOM keeps its hashes.
    if (!isSignGateError(error)) throw error;
  }
  return { sha512, references, ...versions };
}
