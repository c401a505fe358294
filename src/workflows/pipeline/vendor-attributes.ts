// The vendor attribute types that the vendor API references declare (`--reference`: files, or folders to take the
// vendor API DLLs from), so that messages name the type exactly. Those of the vendor API assemblies among the inputs
// come from their parse in the engine (withInputDeclarations), which reads each input once.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { UsageError } from '../../core/errors.js';
import { compileNamePatterns } from '../../rules/name-pattern.js';
import type { CheckSettings } from '../../rules/types.js';
import { declaredInAssembly } from '../../rules/vendor-attribute.js';
import { displayPath } from '../input-paths.js';

/**
 * The settings with the vendor attribute types that `references` declare (files, or folders to take the DLLs whose
 * names match the vendor API patterns from), read only for that. A reference that cannot be read is passed over: it
 * only sharpens a hint.
 * @throws UsageError SG_ERR_USAGE for a reference that does not exist
 */
export function withDeclaredVendorAttributes(settings: CheckSettings, references: readonly string[]): CheckSettings {
  const isVendorApi = compileNamePatterns(settings.vendorApi);
  const vendorApi = (path: string) => /\.dll$/i.test(path) && isVendorApi(basename(path).replace(/\.dll$/i, ''));
  const referenced = references.flatMap((r) => {
    const path = resolve(r);
    if (!existsSync(path))
      throw new UsageError(
        `the reference ${displayPath(path)} does not exist`,
        'Name the vendor API assembly (or its folder) that the add-in compiles against.',
      );
    return statSync(path).isDirectory()
      ? readdirSync(path)
          .filter(vendorApi)
          .map((n) => join(path, n))
      : [path];
  });
  const declared = referenced.flatMap((file) => declaredInAssembly(() => readFileSync(file), settings));
  return declared.length ? { ...settings, declaredVendorAttributes: declared } : settings;
}
