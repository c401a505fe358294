// SG504 nothing-to-sign: no input needs signing, so a passing check would approve nothing; name the likely cause.
import { distance as editDistance } from '../core/words.js';
import { compileNamePatterns } from './name-pattern.js';
import { defineRule, usesVendorApi, type CheckSettings, type FileFacts, type RuleReport } from './types.js';

/** Up to this many edits between a referenced name and the vendor name count as a likely typo. */
const MAX_VENDOR_EDITS = 2;

/** A referenced assembly whose name is close to the vendor's, with the vendor name it suggests. */
interface NearMiss {
  readonly reference: string;
  readonly vendor: string;
}

/**
 * AssemblyRefs that look like the vendor's API under another spelling: the whole name or its first segment
 * within two edits of the vendor name (case ignored), or starting with the vendor name but outside the
 * configured API patterns.
 */
function nearMisses(files: readonly FileFacts[], settings: CheckSettings): NearMiss[] {
  const vendor = settings.vendor.toLowerCase();
  const found = new Map<string, NearMiss>();
  for (const f of files) {
    for (const reference of f.referenceNames) {
      const first = reference.split('.')[0]!;
      const close = [reference, first].some((n) => editDistance(n.toLowerCase(), vendor) <= MAX_VENDOR_EDITS);
      if (close && !found.has(reference.toLowerCase())) found.set(reference.toLowerCase(), { reference, vendor: first });
    }
  }
  return [...found.values()].sort((a, b) => (a.reference < b.reference ? -1 : a.reference > b.reference ? 1 : 0));
}

function report(all: readonly FileFacts[], settings: CheckSettings): RuleReport {
  const api = settings.vendorApi.join(', ');
  if (all.length === 0) {
    return {
      message: 'nothing to sign: the inputs hold no .dll or .exe file',
      hint: "Name the add-in's build output (for example bin/Release) or its assemblies; a folder stands for every *.dll and *.exe below it.",
      data: { cause: 'no-inputs' },
    };
  }
  // Only a file with metadata has an assembly name: the metadata itself is not needed here.
  const assemblies = all.filter((f) => f.assemblyName);
  if (assemblies.length === 0) {
    const unreadable = all.filter((f) => f.readError).length;
    const other = all.length - unreadable;
    const what =
      all.length === 1
        ? unreadable
          ? 'SG001 refuses it'
          : 'it is native code or a netmodule'
        : [...(unreadable ? [`${unreadable} refused (SG001)`] : []), ...(other ? [`${other} native code or netmodule${other === 1 ? '' : 's'}`] : [])].join(
            ', ',
          );
    // A file SG001 refuses may well be an assembly the runtime loads: it is outside what signgate reads, not "not .NET".
    const noun = unreadable ? 'a .NET assembly signgate can read' : 'a .NET assembly';
    return {
      message: `nothing to sign: ${all.length === 1 ? 'the one input file is not' : `none of the ${all.length} input files is`} ${noun} (${what})`,
      hint: "Point signgate at the add-in's build output: the .NET assemblies that reference the vendor's API.",
      data: { cause: 'no-assemblies', files: all.length, unreadable },
    };
  }
  const misses = nearMisses(assemblies, settings);
  // One assembly (a project's output, in a build): the finding is about it, and names it.
  const file = assemblies.length === 1 ? { file: assemblies[0]!.input.path } : {};
  const isVendorApi = compileNamePatterns(settings.vendorApi);
  const suggestions = [...new Set(misses.filter((m) => !isVendorApi(m.reference)).map((m) => m.vendor))];
  const sameVendor = suggestions.filter((v) => v.toLowerCase() === settings.vendor.toLowerCase());
  const near = misses.length ? `; close to the vendor name: ${misses.map((m) => m.reference).join(', ')}` : '';
  const vendorOwn = assemblies.filter((f) => f.role.kind === 'vendor').map((f) => f.assemblyName!);
  const others = assemblies.length - vendorOwn.length;
  const what =
    others === 0
      ? `the only ${vendorOwn.length === 1 ? 'assembly is' : 'assemblies are'} the vendor's own (${vendorOwn.join(', ')})`
      : `${others === 1 ? 'the one assembly does not reference' : `none of the ${others} assemblies references`} a vendor API assembly (${api})${near}`;
  // In a build, one project's output that references no vendor API and nothing like it: a helper of the solution
  // (settings in Directory.Build.props reach every project), which needs no signing. Said in one line, not an error.
  if (settings.inBuild && others > 0 && misses.length === 0) {
    return {
      severity: 'note',
      ...file,
      message: `needs no signing: ${what}`,
      hint: "Nothing to do for a project that does not use the vendor's API. If it is an add-in, set SigngateVendor (and SigngateVendorApi when the API assemblies are named otherwise than <Vendor>.*).",
      data: { cause: 'no-vendor-reference', assemblies: assemblies.length, nearMisses: [], suggestedVendors: [], inBuild: true },
    };
  }
  return {
    ...file,
    message: `nothing to sign: ${what}`,
    hint: sameVendor.length
      ? `The vendor name is right but the API patterns miss its assemblies: add them with --vendor-api (for example --vendor-api "${sameVendor[0]}.*").`
      : suggestions.length
        ? `Is the vendor name right? Did you mean --vendor ${suggestions.join(' or --vendor ')}?`
        : "Check --vendor and --vendor-api, and that the inputs are the add-in's build output: an add-in references the vendor's API assemblies.",
    data: { cause: 'no-vendor-reference', assemblies: assemblies.length, nearMisses: misses.map((m) => m.reference), suggestedVendors: suggestions },
  };
}

export default defineRule({
  id: 'SG504',
  name: 'nothing-to-sign',
  scope: 'set',
  defaultSeverity: 'error',
  summary: 'No input needs signing: there is no .NET assembly among the inputs, or none references the vendor API, so a passing check would approve nothing.',
  hint: 'Check the paths and the vendor name: an add-in references the vendor API assemblies (<Vendor>.*).',
  check: ({ all, settings }) => {
    const files = [...all.values()];
    // Files already signed with the organization's key still need signing (they just need no new upload): not this rule.
    // A file that only carries an option's key (a dependency delay-signed for the service) goes with an API program;
    // alone it approves nothing either (and a mistyped vendor name would make every add-in file look like one).
    if (files.some((f) => usesVendorApi(f.role))) return [];
    return [report(files, settings)];
  },
});
