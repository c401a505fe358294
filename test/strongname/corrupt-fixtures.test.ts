import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { inspectAssembly } from '../../src/strongname/assembly-info.js';
import { fixture, fixturePath } from '../helpers/fixtures.js';

interface Expected {
  file: string;
  error?: string;
  state?: string;
  details?: string[];
  managed?: boolean;
}

const expected: Expected[] = JSON.parse(readFileSync(fixturePath('corrupt-expected.json'), 'utf8'));

describe('corrupted files give typed errors with a code, a structure and an offset', () => {
  test.each(expected.filter((e) => e.error).map((e) => [e.file, e.error!] as const))('%s -> %s', (file, code) => {
    const info = inspectAssembly(fixture(file), file);
    expect(info.error?.code).toBe(code);
    expect(info.error?.message.length).toBeGreaterThan(10);
    // Every message states where: a hex offset or a byte count.
    expect(info.error?.message).toMatch(/0x[0-9A-F]+|\d+ bytes|\d+ rows/);
  });
});

describe('odd strong-name shapes are classified by content', () => {
  test.each(expected.filter((e) => !e.error).map((e) => [e.file, e] as const))('%s', (file, e) => {
    const info = inspectAssembly(fixture(file), file);
    expect(info.error).toBeNull();
    if (e.managed === false) {
      expect(info.managed).toBe(false);
      expect(info.pe).not.toBeNull();
      return;
    }
    expect(info.strongName?.state).toBe(e.state);
    expect(info.strongName?.details).toEqual(e.details);
  });
});
