// Rule definitions: one module per rule, declared through defineRule so types infer.
import type { AuthenticodeInfo } from '../authenticode/authenticode.js';
import type { FindingLocation, Severity } from '../core/diagnostic.js';
import type { FileRow, ModuleMetadata } from '../metadata/module-metadata.js';
import type { PublicKeyInfo } from '../strongname/key-blob.js';
import type { StrongNameStatus } from '../strongname/strong-name.js';

/** A key the organization may sign with: `<optionId>_public.snk`. */
export interface ExpectedKey {
  /** From the file name; null when the name does not follow `<optionId>_public.snk`. */
  readonly optionId: number | null;
  /** How the key file is shown in messages. */
  readonly source: string;
  /** True when the file holds a key pair (a private key too): no option's public key file, as the vendor hands them out. */
  readonly keyPair?: boolean;
  /** The key file's name as the user gave it (`12345_public.snk`), for fix hints; see `keyFileName`. */
  readonly fileName?: string;
  readonly publicKey: PublicKeyInfo;
  readonly token: string;
}

export interface CheckSettings {
  /** Vendor name, e.g. "Contoso": the attribute is `<Vendor>SignedAssemblyAttribute`. */
  readonly vendor: string;
  /** Glob patterns for the vendor's API assembly names (default `<Vendor>.*`), matched case-insensitively. */
  readonly vendorApi: readonly string[];
  /** Namespace the vendor attribute must be in: the vendor name or below it (default the vendor name). */
  readonly vendorNamespace: string;
  readonly keys: readonly ExpectedKey[];
  /**
   * The check runs in an MSBuild build (the targets' `--from-msbuild`): one project's output, where a project that
   * references no vendor API (a helper of the solution) needs no signing, and settings are MSBuild properties.
   */
  readonly inBuild?: boolean;
  /** Upload limit in bytes (the service's limit; default 40 MB). */
  readonly maxUploadBytes: number;
  /** When set, upload names are paths relative to this folder (`/`-separated); else bare file names. */
  readonly root: string | null;
  /**
   * The vendor attribute types declared in the vendor API assemblies at hand (among the inputs, or the build's
   * references), so that messages name the real type.
   */
  readonly declaredVendorAttributes?: readonly DeclaredVendorAttribute[];
  /**
   * The folders that hold the inputs, as the file system has them: the assembly files in each, and where its
   * `*.deps.json` says the build resolved the dependencies that are not there. SG401 says when the library a
   * reference names is not beside the file. Undefined when not known (an archive).
   */
  readonly inputFolders?: readonly InputFolder[];
  /** Option ids from GET /licenses, when the check ran online; undefined offline. */
  readonly licensedOptionIds?: readonly number[];
  /**
   * The public key token of each option, as GET /licenses reports it (`publicKeyToken`, signgate's extension), when
   * the check ran online; an option the service reports no token for is not listed.
   */
  readonly licensedKeyTokens?: readonly LicensedKeyToken[];
}

/** An option's public key token as the signing service reports it. */
export interface LicensedKeyToken {
  readonly optionId: number;
  /** 16 lower-case hex digits. */
  readonly token: string;
  /**
   * Where `signgate licenses --public-key <optionId> --out` may write the option's public key file without overwriting
   * a file (a key file given among them); undefined where no folder is known (the service), `<optionId>_public.snk`.
   */
  readonly saveAs?: string;
}

/** A folder that holds inputs (see CheckSettings.inputFolders). */
export interface InputFolder {
  /** The folder as the inputs' paths show it (`/`-separated; `.` for the working directory). */
  readonly folder: string;
  /** The simple names, in lower case, of the `*.dll` and `*.exe` files in it. */
  readonly assemblies: readonly string[];
  /** The dependencies its `*.deps.json` files name whose file is not in the folder. */
  readonly resolved: readonly ResolvedDependency[];
}

/** A runtime assembly a `*.deps.json` names: where the build resolved it from. */
export interface ResolvedDependency {
  /** The simple name its file gives (`Markdig`). */
  readonly name: string;
  /** The deps.json file that names it (`MyAddin.deps.json`). */
  readonly depsFile: string;
  /** The library that brings it (`Markdig/0.37.0`) and its type (`package`, `project`, …). */
  readonly library: string;
  readonly type: string;
  /** The file's path in the library (`lib/net8.0/Markdig.dll`). */
  readonly asset: string;
  /** The file in the NuGet package folder, when it is there (`~/.nuget/packages/markdig/0.37.0/lib/net8.0/Markdig.dll`). */
  readonly cached?: string;
}

/** A `<Vendor>SignedAssemblyAttribute` type as a vendor API assembly declares it. */
export interface DeclaredVendorAttribute {
  /** Namespace.Name, e.g. `Acme.Starter.AcmeSignedAssemblyAttribute`. */
  readonly fullName: string;
  /** The simple name of the assembly that declares it, e.g. `Acme.AddinApi`. */
  readonly assembly: string;
}

/** Why a file is (or is not) part of the upload. */
export type FileRole =
  | { readonly kind: 'direct'; readonly vendorReferences: readonly string[]; readonly vendorTypes: readonly string[] }
  | { readonly kind: 'marked' }
  | { readonly kind: 'indirect'; readonly via: readonly string[] }
  | { readonly kind: 'companion'; readonly companionOf: string; readonly companion: 'xml-serializers' | 'com-interop' | 'satellite' }
  /**
   * Uses no vendor API, but carries the public key of one of the organization's options (`fix --delay-sign`, or a
   * helper built with the option's key): only the service can sign it, so it is uploaded like an API program.
   */
  | { readonly kind: 'option-key'; readonly optionId: number | null; readonly token: string }
  /** A netmodule listed in the File table of an input assembly: uploaded with it, not signed itself. */
  | { readonly kind: 'module'; readonly moduleOf: string; readonly manifest: string }
  | { readonly kind: 'vendor' }
  | { readonly kind: 'not-required'; readonly why: string }
  | { readonly kind: 'unreadable' };

/** One input file. `explicit` is true when it was named directly, not found in a folder or by a glob. */
export interface CheckInput {
  readonly path: string;
  /** The path relative to the upload root with `/`, when a root is set. */
  readonly uploadName: string;
  /**
   * The file's bytes. A file the engine reads when it needs it (engine/inputs.ts: FileToRead) stands here with no
   * bytes on the calling thread (see `named`); a task gets them read through `readInput`.
   */
  readonly bytes: Uint8Array;
  readonly explicit: boolean;
  /** The file's size in bytes, when it is known without reading the file (an input read on demand). */
  readonly size?: number;
}

/** The size of an input, without reading a file read on demand. */
export function inputSize(input: CheckInput): number {
  return input.size ?? input.bytes.length;
}

/** Facts about one file, parsed once and shared by every rule. */
export interface FileFacts {
  readonly input: CheckInput;
  /** The metadata, or undefined when the file is not a managed module. */
  readonly module: ModuleMetadata | undefined;
  /** Why the file could not be read, when it could not. */
  readonly readError: { readonly code: string; readonly message: string; readonly fileOffset?: number } | undefined;
  /** True for a PE image without a CLI header. */
  readonly native: boolean;
  readonly assemblyName: string | undefined;
  /** The assembly's version (Major.Minor.Build.Revision), undefined without an assembly manifest. */
  readonly assemblyVersion: string | undefined;
  /** The token of the public key the assembly carries, null when it carries none. */
  readonly publicKeyToken: string | null;
  /** The configured key the assembly carries, byte for byte (any strong-name state), with its option id; else null. */
  readonly optionKey: { readonly optionId: number | null; readonly token: string } | null;
  readonly culture: string;
  readonly referenceNames: readonly string[];
  /**
   * For an assembly's manifest module: the netmodules its File table lists (rows that contain metadata), each
   * with the display path of the input it was matched to (same folder, name compared case-insensitively).
   */
  readonly netmodules: readonly LinkedModule[];
  readonly role: FileRole;
  /** Strong-name state, computed on first use. */
  readonly status: () => StrongNameStatus;
  /** The Authenticode signatures of a managed module, read and verified on first use (SG208 and the audit share it). */
  readonly authenticode: () => AuthenticodeInfo;
}

/** A File-table row of a manifest module that names a netmodule, and the input found for it. */
export interface LinkedModule {
  readonly row: FileRow;
  /** Display path of the matching input, or undefined when no input matches. */
  readonly path: string | undefined;
}

export interface RuleReport {
  readonly message: string;
  /** Lower than the rule's severity when what was found is only worth a note (SG504 in a build: a helper project). */
  readonly severity?: 'note';
  /** Overrides the rule's default hint when the fix depends on what was found. */
  readonly hint?: string;
  /** For set rules: the file the finding is about, if any. */
  readonly file?: string | null;
  readonly location?: FindingLocation;
  readonly data?: Readonly<Record<string, unknown>>;
}

export interface FileRuleContext {
  readonly facts: FileFacts;
  readonly settings: CheckSettings;
  /**
   * Facts of the file and of the netmodules its File table lists, by display path: a file's findings depend on
   * nothing else, so it can be checked in a worker thread. Rules over the whole set are set rules.
   */
  readonly all: ReadonlyMap<string, FileFacts>;
}

export interface UploadSet {
  readonly files: readonly FileFacts[];
  readonly totalBytes: number;
}

export interface SetRuleContext {
  readonly all: ReadonlyMap<string, FileFacts>;
  readonly upload: UploadSet;
  readonly settings: CheckSettings;
}

interface RuleMeta<Id extends string, Name extends string> {
  readonly id: Id;
  readonly name: Name;
  readonly defaultSeverity: Severity;
  /**
   * False for a rule that reports only when the configuration asks for it (`"rules": { "<name>": "note" }`): its
   * finding describes the expected state of the files it looks at, which a gate must not report on every build.
   */
  readonly enabledByDefault?: boolean;
  /** One line: what the rule checks. */
  readonly summary: string;
  /** The default fix. */
  readonly hint: string;
}

export interface FileRule<Id extends string = string, Name extends string = string> extends RuleMeta<Id, Name> {
  readonly scope: 'file';
  /** Runs for files that must be uploaded (`needsSigning`), or for every file when `allFiles` is set. */
  readonly allFiles?: boolean;
  readonly check: (context: FileRuleContext) => RuleReport[];
  /** What the rule finds about the set as a whole, besides each file (the key files against the service: SG205). */
  readonly checkSet?: (context: SetRuleContext) => RuleReport[];
}

export interface SetRule<Id extends string = string, Name extends string = string> extends RuleMeta<Id, Name> {
  readonly scope: 'set';
  readonly check: (context: SetRuleContext) => RuleReport[];
}

export type Rule = FileRule | SetRule;

/** Identity helper that keeps a rule's literal id and name in its type. */
export function defineRule<Id extends string, Name extends string, R extends FileRule<Id, Name> | SetRule<Id, Name>>(rule: R): R {
  return rule;
}

/**
 * A finding only the release audit makes (SG7xx): a rule of the registry like the check's, with its id, name,
 * severity, summary and hint, but no check of its own: the audit (src/audit) decides where it applies, since it
 * judges a release (signed files, a manifest, the previous release, the service's record), not an upload.
 */
export interface AuditRule<Id extends string = string, Name extends string = string> {
  readonly id: Id;
  readonly name: Name;
  readonly severity: 'error' | 'warning';
  readonly summary: string;
  readonly hint: string;
}

export function defineAuditRule<Id extends string, Name extends string, R extends AuditRule<Id, Name>>(rule: R): R {
  return rule;
}

/** Files whose role means they are uploaded for signing. */
export function needsSigning(role: FileRole): boolean {
  return usesVendorApi(role) || role.kind === 'option-key';
}

/**
 * API programs and their companions: the files the vendor's host loads by license (and whose vendor attribute the
 * rules read). A file signed only because it carries an option's key (`option-key`) is not one.
 */
export function usesVendorApi(role: FileRole): boolean {
  return role.kind === 'direct' || role.kind === 'marked' || role.kind === 'indirect' || role.kind === 'companion';
}
