// Will it load? For one assembly as built: under the vendor's runtime license (which loads only API programs
// signed by the service: a valid signature with one of the organization's keys and the vendor attribute true),
// under the developer license (which loads only unsigned API programs), and on .NET Framework at all (which
// refuses a delay-signed, public-signed or tampered strong name unless its key is registered for verification
// skipping with `sn -Vr`; .NET (Core) never validates strong-name signatures). The target framework comes
// from TargetFrameworkAttribute, else from the core library the assembly references.
import type { ModuleMetadata } from '../metadata/module-metadata.js';
import type { StrongNameState } from '../strongname/strong-name.js';
import { sameKeyBlob } from '../strongname/key-blob.js';
import { usesVendorApi, type CheckSettings, type FileFacts } from './types.js';
import { vendorAttributeState } from './vendor-attribute.js';

const TARGET_FRAMEWORK_ATTRIBUTE = 'System.Runtime.Versioning.TargetFrameworkAttribute';

/** Which runtime family the assembly targets. `standard` runs on both; `unknown` is treated as .NET Framework. */
export type TargetKind = 'framework' | 'core' | 'standard' | 'unknown';

export interface TargetFramework {
  /** The attribute's moniker as written (`.NETFramework,Version=v4.8`), or null without the attribute. */
  readonly moniker: string | null;
  readonly kind: TargetKind;
  /** Where `kind` came from: the attribute, the referenced core library (mscorlib, System.Runtime, netstandard), or nothing. */
  readonly source: 'attribute' | 'core-library' | 'none';
}

export interface LoadAnswer {
  readonly loads: boolean;
  /** Why, in a sentence. */
  readonly why: string;
}

export interface LoadVerdict {
  readonly target: TargetFramework;
  /**
   * The file uses the vendor API (directly, indirectly, or as a companion): the licenses decide whether the vendor's
   * host loads it. A file signed only for the option key it carries (role `option-key`) is not an API program.
   */
  readonly apiProgram: boolean;
  readonly runtimeLicense: LoadAnswer;
  readonly developerLicense: LoadAnswer;
  /** On .NET Framework at all, as built (no verification-skipping entry assumed); null for a .NET (Core) target, which does not validate strong names. */
  readonly netFramework: LoadAnswer | null;
}

/** The target framework of a module: TargetFrameworkAttribute first, else the core library it references. */
export function targetFramework(module: ModuleMetadata): TargetFramework {
  const attribute = module.assemblyAttributes.find((a) => a.typeName === TARGET_FRAMEWORK_ATTRIBUTE);
  if (attribute) {
    let moniker: string | null = null;
    try {
      const value = module.decodeAttribute(attribute).fixedArguments[0]?.value;
      if (typeof value === 'string') moniker = value;
    } catch {
      // An undecodable attribute tells nothing; fall back to the references.
    }
    if (moniker !== null) {
      const family = moniker.split(',')[0]!.trim().toLowerCase();
      const kind: TargetKind =
        family === '.netframework' ? 'framework' : family === '.netcoreapp' ? 'core' : family === '.netstandard' ? 'standard' : 'unknown';
      return { moniker, kind, source: 'attribute' };
    }
  }
  const refs = new Set(module.assemblyReferences.map((r) => r.name.toLowerCase()));
  const name = module.assembly?.name.toLowerCase();
  if (refs.has('system.private.corelib') || refs.has('system.runtime') || name === 'system.private.corelib')
    return { moniker: null, kind: 'core', source: 'core-library' };
  if (refs.has('netstandard')) return { moniker: null, kind: 'standard', source: 'core-library' };
  if (refs.has('mscorlib') || name === 'mscorlib') return { moniker: null, kind: 'framework', source: 'core-library' };
  return { moniker: null, kind: 'unknown', source: 'none' };
}

/** Strong-name states .NET Framework refuses to load without a verification-skipping entry (sn -Vr). */
const REFUSED_BY_FRAMEWORK: ReadonlySet<StrongNameState> = new Set(['delay-signed', 'public-signed', 'invalid-signature']);

function frameworkAnswer(state: StrongNameState, token: string | null): LoadAnswer {
  if (!REFUSED_BY_FRAMEWORK.has(state)) return { loads: true, why: state === 'signed' ? 'validly signed' : 'not strong-named: nothing to validate' };
  if (state === 'invalid-signature') return { loads: false, why: 'its signature does not match its bytes: .NET Framework refuses it' };
  return { loads: false, why: `${state}: .NET Framework refuses it unless its key is registered for verification skipping (sn -Vr *,${token ?? '<token>'})` };
}

/**
 * Why .NET Framework refuses the assembly as built (delay-signed, public-signed, or a signature that does not match
 * its bytes), with the target it was built for; undefined when it loads there, targets .NET (Core), which validates no
 * strong name, or is no assembly. The strong-name state is read first: the target only for a refused state.
 */
export function netFrameworkRefusal(facts: FileFacts): { readonly target: TargetFramework; readonly answer: LoadAnswer } | undefined {
  if (!facts.module || !facts.assemblyName) return undefined;
  const status = facts.status();
  if (!REFUSED_BY_FRAMEWORK.has(status.state)) return undefined;
  const target = targetFramework(facts.module);
  if (target.kind === 'core') return undefined;
  return { target, answer: frameworkAnswer(status.state, status.publicKeyToken) };
}

/** How a target is named in messages: the moniker, else the family and how it was found. */
export function describeTarget(t: TargetFramework): string {
  if (t.moniker) return t.moniker;
  return {
    framework: '.NET Framework (references mscorlib)',
    core: '.NET (references System.Runtime)',
    standard: '.NET Standard (references netstandard)',
    unknown: 'target not known: treated as .NET Framework',
  }[t.kind];
}

/** Whether the assembly will load, for every managed assembly; undefined for native files, netmodules and unreadable files. */
export function loadVerdict(facts: FileFacts, settings: CheckSettings): LoadVerdict | undefined {
  if (!facts.module || !facts.assemblyName) return undefined;
  const target = targetFramework(facts.module);
  const status = facts.status();
  const validatedByFramework = target.kind !== 'core';
  const netFramework = validatedByFramework ? frameworkAnswer(status.state, status.publicKeyToken) : null;
  const apiProgram = usesVendorApi(facts.role);
  if (!apiProgram) {
    const na = (license: string): LoadAnswer =>
      netFramework && !netFramework.loads
        ? { loads: false, why: `not an API program, but ${netFramework.why}` }
        : { loads: true, why: `not an API program: the ${license} license does not decide` };
    return { target, apiProgram, runtimeLicense: na('runtime'), developerLicense: na('developer'), netFramework };
  }
  const orgKey = status.publicKey !== null && settings.keys.some((k) => sameKeyBlob(k.publicKey, status.publicKey!));
  // Companions (satellites, XmlSerializers, interop) are loaded for their assembly and carry no attribute.
  const attribute = facts.role.kind === 'companion' ? 'not-required' : vendorAttributeState(facts, settings);
  const signedByService = status.state === 'signed' && orgKey;
  const runtimeOk = signedByService && (attribute === 'present' || attribute === 'not-required');
  const missing: string[] = [];
  if (status.state !== 'signed')
    missing.push(status.state === 'invalid-signature' ? 'its signature does not match its bytes' : `${status.state}, not signed by the service`);
  else if (!orgKey) missing.push(`signed with another key (token ${status.publicKeyToken}), not the organization's`);
  if (attribute !== 'present' && attribute !== 'not-required') missing.push(`vendor attribute ${attribute}`);
  const runtimeLicense: LoadAnswer = runtimeOk
    ? { loads: true, why: "signed by the service with the organization's key, vendor attribute true" }
    : { loads: false, why: missing.join('; ') };
  let developerLicense: LoadAnswer;
  if (runtimeOk) developerLicense = { loads: false, why: 'signed by the service; the developer license loads only unsigned API programs' };
  else if (netFramework && !netFramework.loads) developerLicense = { loads: false, why: netFramework.why };
  else
    developerLicense = {
      loads: true,
      why:
        status.state === 'unsigned'
          ? 'an unsigned API program'
          : `not signed by the service; ${netFramework ? 'validly strong-named' : '.NET does not validate strong names'}`,
    };
  return { target, apiProgram, runtimeLicense, developerLicense, netFramework };
}

/** "runtime", "developer", "runtime and developer" or "neither": the licenses a verdict loads under. */
export function loadsUnder(v: LoadVerdict): 'runtime' | 'developer' | 'both' | 'neither' {
  if (v.runtimeLicense.loads && v.developerLicense.loads) return 'both';
  if (v.runtimeLicense.loads) return 'runtime';
  if (v.developerLicense.loads) return 'developer';
  return 'neither';
}
