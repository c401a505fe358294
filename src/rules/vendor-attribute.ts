// Finding `<Vendor>SignedAssemblyAttribute` and telling the vendor's type from look-alikes.
import type { CustomAttributeRow, ModuleMetadata } from '../metadata/module-metadata.js';
import { compileNamePatterns, isInNamespace } from './name-pattern.js';
import type { CheckSettings, FileFacts } from './types.js';

/** A constructor taking exactly one bool: HASTHIS, 1 parameter, void, BOOLEAN (strong-naming.md 4.3). */
export const ONE_BOOL_CTOR = '20010102';

export function vendorAttributeName(settings: CheckSettings): string {
  return `${settings.vendor}SignedAssemblyAttribute`;
}

function simpleName(typeName: string): string {
  return typeName.split(/[./]/).pop()!;
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
  // Generated companions (XmlSerializers, interop, satellites) need no attribute.
  if (facts.module && facts.role.kind !== 'companion') {
    const name = vendorAttributeName(settings);
    const found = facts.module.assemblyAndModuleAttributes();
    result = {
      module: facts.module,
      onAssembly: found.assembly.filter((a) => simpleName(a.typeName) === name),
      onModule: found.module.filter((a) => simpleName(a.typeName) === name),
    };
  }
  bySettings.set(settings, result);
  return result;
}

/** Why an attribute type is not the vendor's, or undefined when it is. */
export function lookAlikeReason(row: CustomAttributeRow, settings: CheckSettings): string | undefined {
  const isVendorApi = compileNamePatterns(settings.vendorApi);
  if (row.origin.kind === 'this-module') return `${row.typeName} is declared in this assembly, not referenced from the vendor's`;
  if (row.origin.kind !== 'assembly') return `${row.typeName} does not come from a vendor assembly`;
  if (!isVendorApi(row.origin.name)) return `${row.typeName} comes from ${row.origin.name}, which is not a vendor API assembly (${settings.vendorApi.join(', ')})`;
  if (!isInNamespace(row.typeNamespace, settings.vendorNamespace)) return `${row.typeName} is not in the vendor namespace ${settings.vendorNamespace}`;
  return undefined;
}

/** The vendor's own attribute among the candidates on the assembly. */
export function vendorAttributeOnAssembly(c: VendorAttributeCandidates, settings: CheckSettings): CustomAttributeRow | undefined {
  return c.onAssembly.find((a) => lookAlikeReason(a, settings) === undefined);
}
