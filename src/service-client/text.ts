// What the service says is untrusted text: control characters (terminal escapes, bidi overrides) are removed
// before it is shown, its length is bounded, and secrets it echoes are masked. Every piece of service text that
// is printed, reported or stored passes through cleanServiceText.
import { maskSecrets } from '../core/secrets.js';

// C0 and C1 controls, DEL, and the bidi embedding/override/isolate marks that reorder a terminal line.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * `text` with control characters replaced by spaces, runs of white space folded, the access token (in any
 * encoding) and anything shaped like a token masked, cut to `max` characters.
 */
export function cleanServiceText(text: string, max = 2000): string {
  // Masked before and after the folding: a token cut by a line break is found in pieces, then as a whole.
  const clean = maskSecrets(maskSecrets(text).replace(UNSAFE, ' ').replace(/\s+/g, ' ').trim());
  return clean.length > max ? `${clean.slice(0, max)}… (${clean.length - max} more characters)` : clean;
}
