// Waiting for an event (a process listening, a job finished, a line in a log) instead of for a number of
// milliseconds: the wait ends as soon as the event happens, and a loaded machine only makes it later. The ceiling
// is generous (minutes) and is there so that a wait for something that never comes ends with a message that says
// what was awaited and what was seen last, rather than with vitest's bare "Test timed out".

/** The ceiling of a wait unless it names its own: three minutes. */
export const WAIT_CEILING_MS = 180_000;

export interface WaitOptions {
  /** The most the wait may take (default WAIT_CEILING_MS). */
  ceilingMs?: number;
  /** The pause between two looks (default 50 ms). */
  intervalMs?: number;
}

/** The error a wait throws when its ceiling is reached, or when a look gives up (the awaited event cannot come). */
export class WaitError extends Error {}

/** "waited 180 s for <what>; last seen: <seen>", with the last thing seen cut to its last 2,000 characters. */
export function waitedMessage(what: string, ms: number, seen: unknown): string {
  const text = typeof seen === 'string' ? seen : seen instanceof Error ? seen.message : (JSON.stringify(seen) ?? String(seen));
  return `waited ${Math.round(ms / 1000)} s for ${what}; last seen: ${text.length > 2000 ? `…${text.slice(-2000)}` : text}`;
}

export type Look<T> = { done: true; value: T } | { done: false; seen: unknown };

/**
 * Looks with `look` until it returns `{ done: true, value }`, every `intervalMs`, and resolves with the value. Each
 * look that is not done returns what it saw (`seen`), which the error quotes when the ceiling is reached. A look
 * that throws a WaitError ends the wait with it (the event cannot come any more: the process ended); any other
 * error counts as not done yet, its message as what was seen.
 */
export async function waitFor<T>(what: string, look: () => Promise<Look<T>> | Look<T>, options: WaitOptions = {}): Promise<T> {
  const ceilingMs = options.ceilingMs ?? WAIT_CEILING_MS;
  const intervalMs = options.intervalMs ?? 50;
  const started = Date.now();
  let seen: unknown;
  for (;;) {
    try {
      const result = await look();
      if (result.done) return result.value;
      seen = result.seen;
    } catch (error) {
      if (error instanceof WaitError) throw error;
      seen = error;
    }
    if (Date.now() - started >= ceilingMs) throw new WaitError(waitedMessage(what, Date.now() - started, seen));
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** waitFor over a condition: `check` is true once the event has happened; `seen` says what there is instead. */
export function waitUntil(
  what: string,
  check: () => boolean | Promise<boolean>,
  seen: () => unknown = () => 'not yet',
  options: WaitOptions = {},
): Promise<void> {
  return waitFor<void>(what, async () => ((await check()) ? { done: true, value: undefined } : { done: false, seen: seen() }), options);
}

/**
 * Resolves with the match once `text()` (a process's output so far) matches `pattern`. With `ended` (the
 * process's end), the wait fails at once, quoting the output, when the process ends before the match.
 */
export function waitForOutput(
  what: string,
  text: () => string,
  pattern: RegExp,
  options: WaitOptions & { ended?: Promise<unknown> } = {},
): Promise<RegExpExecArray> {
  let ended: { how: unknown } | undefined;
  void options.ended?.then((how) => (ended = { how }));
  return waitFor(
    what,
    () => {
      const m = pattern.exec(text());
      if (m) return { done: true, value: m };
      if (ended) throw new WaitError(`the process ended (${String(ended.how)}) before ${what}; its output: ${text().slice(-2000)}`);
      return { done: false, seen: text() };
    },
    options,
  );
}
