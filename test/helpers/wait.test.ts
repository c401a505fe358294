// The waits the tests use: they end on the event, and at their ceiling they say what they waited for and saw last.
import { spawn } from 'node:child_process';
import { describe, expect, test } from 'vitest';
import { waitFor, waitForOutput, waitUntil } from './wait.js';

describe('waitFor', () => {
  test('resolves with the value of the first look that is done', async () => {
    let n = 0;
    await expect(waitFor('n to reach 3', () => (++n >= 3 ? { done: true, value: n } : { done: false, seen: n }), { intervalMs: 1 })).resolves.toBe(3);
  });

  test('at its ceiling: "waited N s for <what>; last seen: <what the last look saw>"', async () => {
    let n = 0;
    await expect(
      waitFor('the job to finish', () => ({ done: false, seen: { state: 'running', look: ++n } }), { ceilingMs: 30, intervalMs: 5 }),
    ).rejects.toThrow(/^waited 0 s for the job to finish; last seen: \{"state":"running","look":\d+\}$/);
  });

  test('a look that throws counts as not done, its message as what was seen', async () => {
    await expect(waitUntil('a port to answer', () => Promise.reject(new Error('ECONNREFUSED')), undefined, { ceilingMs: 20, intervalMs: 5 })).rejects.toThrow(
      'waited 0 s for a port to answer; last seen: ECONNREFUSED',
    );
  });

  test('what was seen is cut to its last 2,000 characters', async () => {
    const error = await waitUntil(
      'a line',
      () => false,
      () => `${'a'.repeat(5000)}END`,
      { ceilingMs: 10, intervalMs: 5 },
    ).catch((e: Error) => e);
    expect((error as Error).message).toMatch(/last seen: …a{1997}END$/);
  });
});

describe('waitForOutput', () => {
  test('resolves with the match once the output has it', async () => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => console.log("listening at 4711"), 50); setTimeout(() => {}, 2000)']);
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const ended = new Promise((resolve) => child.on('exit', resolve));
    const m = await waitForOutput('the port', () => out, /listening at (\d+)/, { ended });
    expect(m[1]).toBe('4711');
    child.kill();
  });

  test('fails at once, quoting the output, when the process ends first', async () => {
    const child = spawn(process.execPath, ['-e', 'console.log("no such option"); process.exit(2)']);
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const ended = new Promise((resolve) => child.on('exit', resolve));
    // Not the ceiling's "waited … s for": the end of the process ends the wait.
    await expect(waitForOutput('serve to listen', () => out, /listening/, { ended })).rejects.toThrow(
      /^the process ended \(2\) before serve to listen; its output: no such option/,
    );
  });
});
