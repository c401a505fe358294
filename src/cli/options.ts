// Option values checked while the command line is parsed, before any work starts.
import { UsageError } from '../core/errors.js';

/**
 * A yargs `coerce` for a numeric option: one finite number (given once), optionally a whole number within bounds.
 * @throws UsageError naming the option and the value
 */
export function numberOption(name: string, rules: { integer?: boolean; min?: number; max?: number } = {}) {
  return (value: unknown): number | undefined => {
    if (value === undefined) return undefined;
    if (Array.isArray(value)) throw new UsageError(`--${name} is given ${value.length} times`, `Give --${name} once.`);
    const n = typeof value === 'number' ? value : Number(value);
    const shown = JSON.stringify(value);
    if (!Number.isFinite(n)) throw new UsageError(`--${name} ${shown} is not a number`, `Give --${name} a number.`);
    if (rules.integer && !Number.isInteger(n)) throw new UsageError(`--${name} ${shown} is not a whole number`, `Give --${name} a whole number.`);
    if (rules.min !== undefined && n < rules.min) throw new UsageError(`--${name} ${shown} is below ${rules.min}`, `Give --${name} a value of at least ${rules.min}.`);
    if (rules.max !== undefined && n > rules.max) throw new UsageError(`--${name} ${shown} is above ${rules.max}`, `Give --${name} a value of at most ${rules.max}.`);
    return n;
  };
}
