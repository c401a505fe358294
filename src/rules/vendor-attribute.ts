// Finding `<Vendor>SignedAssemblyAttribute` and telling the vendor's type from look-alikes.
import { ModuleMetadata, type CustomAttributeRow } from '../metadata/module-metadata.js';
import { parsePeImage } from '../pe/pe-image.js';
import { compileNamePatterns, namespacePrefix } from './name-pattern.js';
import type { CheckSettings, DeclaredVendorAttribute, FileFacts } from './types.js';

/** A constructor taking exactly one bool: HASTHIS, 1 parameter, void, BOOLEAN (strong-naming.md 4.3). */
export const ONE_BOOL_CTOR = '20010102';

export function vendorAttributeName(settings: CheckSettings): string {
  return `${settings.vendor}SignedAssemblyAttribute`;
}

/** The type's own name, without namespace, enclosing types or generic arity (`Name`1`). */
function simpleName(typeName: string): string {
  const own = typeName.slice(Math.max(typeName.lastIndexOf('.'), typeName.lastIndexOf('/')) + 1);
  return own.includes('`') ? own.replace(/`\d+$/, '') : own;
}

/** A generic type's name as C# writes it: `Contoso.XAttribute`1` as `Contoso.XAttribute<T>`. */
function csharpTypeName(typeName: string): string {
  return typeName.replace(/`(\d+)$/, (_, n: string) => `<${Array.from({ length: Number(n) }, (_, i) => (i === 0 ? 'T' : `T${i + 1}`)).join(', ')}>`);
}

/**
 * The vendor name is matched without regard to case, as the API patterns are (`--vendor contoso` finds
 * `Contoso.AddinApi`): only the vendor's API assembly can supply the real type, so its spelling is the real one,
 * and a local type spelled differently is still reported as a look-alike.
 */
export function isVendorAttributeName(typeName: string, settings: CheckSettings): boolean {
  return simpleName(typeName).toLowerCase() === vendorAttributeName(settings).toLowerCase();
}

export interface VendorAttributeCandidates {
  readonly module: ModuleMetadata;
  readonly onAssembly: readonly CustomAttributeRow[];
  readonly onModule: readonly CustomAttributeRow[];
}

/** Four rules look at the same candidates: find them once per file and settings. */
const candidateCache = new WeakMap<FileFacts, WeakMap<CheckSettings, VendorAttributeCandidates | undefined>>();

/** Attributes named like the vendor attribute, on the assembly and on the module; undefined when rules do not apply. */
export function vendorAttributeCandidates(facts: FileFacts, settings: CheckSettings): VendorAttributeCandidates | undefined {
  let bySettings = candidateCache.get(facts);
  if (!bySettings) candidateCache.set(facts, (bySettings = new WeakMap()));
  if (bySettings.has(settings)) return bySettings.get(settings);
  let result: VendorAttributeCandidates | undefined;
  // Generated companions (XmlSerializers, interop, satellites) need no attribute, nor does a file signed only for
  // the option key it carries (the host loads it as a dependency, not as an API program).
  if (facts.module && facts.role.kind !== 'companion' && facts.role.kind !== 'option-key') {
    // Only the attributes whose type's own name may be the vendor attribute's are read whole.
    const found = facts.module.assemblyAndModuleAttributesNamedLike((name) => isVendorAttributeName(name, settings));
    result = {
      module: facts.module,
      onAssembly: found.assembly.filter((a) => isVendorAttributeName(a.typeName, settings)),
      onModule: found.module.filter((a) => isVendorAttributeName(a.typeName, settings)),
    };
  }
  bySettings.set(settings, result);
  return result;
}

/** Why an attribute type is not the vendor's, or undefined when it is. */
export function lookAlikeReason(row: CustomAttributeRow, settings: CheckSettings): string | undefined {
  const isVendorApi = compileNamePatterns(settings.vendorApi);
  const api = settings.vendorApi.join(', ');
  const generic = /`\d+$/.test(row.typeName);
  if (generic && row.origin.kind === 'this-module')
    return `${csharpTypeName(row.typeName)} is a generic look-alike declared in this assembly; the vendor's attribute is not generic and comes from a vendor API assembly (${api})`;
  if (generic) return `${csharpTypeName(row.typeName)} is generic; the vendor's attribute is not`;
  if (row.origin.kind === 'this-module') return `${row.typeName} is declared in this assembly, not referenced from a vendor API assembly (${api})`;
  if (row.origin.kind !== 'assembly') return `${row.typeName} does not come from a vendor assembly`;
  if (!isVendorApi(row.origin.name)) return `${row.typeName} comes from ${row.origin.name}, which is not a vendor API assembly (${api})`;
  if (namespacePrefix(row.typeNamespace, settings.vendorNamespace) === undefined)
    return `${row.typeName} is not in the vendor namespace ${settings.vendorNamespace}`;
  return undefined;
}

/**
 * What to do about a look-alike, by where it comes from: a local declaration is deleted; one from a vendor API
 * assembly outside the vendor namespace that is given means the namespace setting is wrong (its own is named).
 */
export function lookAlikeHint(row: CustomAttributeRow, settings: CheckSettings): string {
  const isVendorApi = compileNamePatterns(settings.vendorApi);
  if (row.origin.kind === 'this-module') return "Delete the local declaration and reference the vendor's API assembly, which defines the real attribute.";
  if (row.origin.kind === 'assembly' && isVendorApi(row.origin.name) && !/`\d+$/.test(row.typeName)) {
    const namespace = row.typeNamespace || '(the global namespace)';
    return `${row.origin.name} declares the attribute in the namespace ${namespace}: if it is the vendor's API, name that namespace (--vendor-namespace ${namespace}, "vendorNamespace" in signgate.config.json); otherwise use the attribute of the vendor's API assembly.`;
  }
  if (row.origin.kind === 'assembly')
    return `Use the attribute of the vendor's API assembly (${settings.vendorApi.join(', ')}) instead of the one ${row.origin.name} declares; if ${row.origin.name} is the vendor's API, add it to the vendor API patterns (--vendor-api).`;
  return "Use the attribute of the vendor's API assembly, which defines the real attribute.";
}

/** The vendor's own attribute among the candidates on the assembly. */
export function vendorAttributeOnAssembly(c: VendorAttributeCandidates, settings: CheckSettings): CustomAttributeRow | undefined {
  return c.onAssembly.find((a) => lookAlikeReason(a, settings) === undefined);
}

/**
 * How to write the vendor attribute in C# (`Contoso.ContosoSignedAssembly`), spelled as the vendor spells it:
 * from the attribute type when this module references it from a vendor assembly, else from the namespace of
 * the vendor types or the names of the vendor assemblies it references, else as configured.
 */
export function vendorAttributeSpelling(facts: FileFacts, settings: CheckSettings): string {
  const strip = (typeName: string) => typeName.replace(/Attribute$/, '');
  const c = vendorAttributeCandidates(facts, settings);
  const real = c && [...c.onAssembly, ...c.onModule].find((a) => lookAlikeReason(a, settings) === undefined);
  if (real) return strip(real.typeName);
  const isVendorApi = compileNamePatterns(settings.vendorApi);
  const vendorTypes = facts.role.kind === 'direct' ? facts.role.vendorTypes : [];
  const attributeType = vendorTypes.find((t) => isVendorAttributeName(t, settings) && namespacePrefix(t, settings.vendorNamespace) !== undefined);
  if (attributeType) return strip(attributeType);
  const namespace =
    [...vendorTypes, ...facts.referenceNames.filter(isVendorApi)].map((n) => namespacePrefix(n, settings.vendorNamespace)).find((p) => p !== undefined) ??
    settings.vendorNamespace;
  // The vendor's own spelling of its name, where the namespace shows it (`Contoso` in `Contoso.Addins`).
  const vendor = namespace.split('.').find((segment) => segment.toLowerCase() === settings.vendor.toLowerCase()) ?? settings.vendor;
  return `${namespace}.${strip(vendorAttributeName({ ...settings, vendor }))}`;
}

export type VendorAttributeState = 'present' | 'false' | 'wrong-type' | 'look-alike' | 'missing' | 'not-required' | 'unreadable';

/** What the vendor attribute on the assembly is, in one word (the audit shows it per file). */
export function vendorAttributeState(facts: FileFacts, settings: CheckSettings): VendorAttributeState {
  if (!facts.module) return 'unreadable';
  const c = vendorAttributeCandidates(facts, settings);
  if (!c) return 'not-required';
  if (c.onAssembly.length === 0) return 'missing';
  const attribute = vendorAttributeOnAssembly(c, settings);
  if (!attribute) return c.onAssembly.some((a) => lookAlikeReason(a, settings)) ? 'look-alike' : 'missing';
  const ctor = c.module.attributeConstructor(attribute);
  if (Buffer.from(ctor.signature.bytes).toString('hex') !== ONE_BOOL_CTOR) return 'wrong-type';
  try {
    return c.module.decodeAttribute(attribute).fixedArguments[0]?.value === true ? 'present' : 'false';
  } catch {
    return 'wrong-type';
  }
}

/** The vendor attribute types a vendor API module declares (public, not nested, not generic, in the vendor namespace). */
export function declaredIn(module: ModuleMetadata, assembly: string, settings: CheckSettings): DeclaredVendorAttribute[] {
  return module
    .typeDefFullNames()
    .filter((t) => !t.includes('/') && !/`\d+$/.test(t) && isVendorAttributeName(t, settings) && namespacePrefix(t, settings.vendorNamespace) !== undefined)
    .map((fullName) => ({ fullName, assembly }));
}

/** The vendor attribute types that a vendor API assembly declares; none when its bytes cannot be read as one. */
export function declaredInAssembly(bytes: () => Uint8Array, settings: CheckSettings): DeclaredVendorAttribute[] {
  try {
    const module = new ModuleMetadata(parsePeImage(bytes()));
    const name = module.assembly?.name;
    return name ? declaredIn(module, name, settings) : [];
  } catch {
    return [];
  }
}

/** How to apply a declared attribute in C#: qualified, and with a `using` line. */
export function csharpApplication(declared: DeclaredVendorAttribute): { qualified: string; namespace: string; short: string } {
  const cut = declared.fullName.lastIndexOf('.');
  const namespace = cut < 0 ? '' : declared.fullName.slice(0, cut);
  const short = declared.fullName.slice(cut + 1).replace(/Attribute$/, '');
  return { qualified: namespace ? `${namespace}.${short}` : short, namespace, short };
}

/** True when vendorAttributeSpelling read the attribute's namespace from this module's own references to it. */
export function vendorAttributeKnown(facts: FileFacts, settings: CheckSettings): boolean {
  const c = vendorAttributeCandidates(facts, settings);
  if (c && [...c.onAssembly, ...c.onModule].some((a) => lookAlikeReason(a, settings) === undefined)) return true;
  const vendorTypes = facts.role.kind === 'direct' ? facts.role.vendorTypes : [];
  return vendorTypes.some((t) => isVendorAttributeName(t, settings) && namespacePrefix(t, settings.vendorNamespace) !== undefined);
}
