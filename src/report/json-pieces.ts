// JSON text in pieces: the text of JSON.stringify(value, null, 2), character for character, made and written one
// element of a large array at a time, so that a report of many megabytes is never one string in memory.

/** The pieces of `JSON.stringify(value, null, 2)` (for plain data: no toJSON, no replacer), split down to `depth`. */
export function* jsonPieces(value: unknown, depth = 2, indent = ''): Generator<string> {
  if (depth === 0 || typeof value !== 'object' || value === null) {
    yield reindent(JSON.stringify(value, null, 2), indent);
    return;
  }
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) {
      yield '[]';
      return;
    }
    yield '[\n';
    for (let i = 0; i < value.length; i++) {
      yield inner;
      const item: unknown = value[i];
      // As JSON.stringify: an element that has no JSON form is null.
      yield* jsonPieces(item === undefined || typeof item === 'function' || typeof item === 'symbol' ? null : item, depth - 1, inner);
      yield i < value.length - 1 ? ',\n' : '\n';
    }
    yield `${indent}]`;
    return;
  }
  // As JSON.stringify: a property whose value has no JSON form is left out.
  const entries = Object.entries(value).filter(([, v]) => v !== undefined && typeof v !== 'function' && typeof v !== 'symbol');
  if (entries.length === 0) {
    yield '{}';
    return;
  }
  yield '{\n';
  for (let i = 0; i < entries.length; i++) {
    const [key, v] = entries[i]!;
    yield `${inner}${JSON.stringify(key)}: `;
    yield* jsonPieces(v, depth - 1, inner);
    yield i < entries.length - 1 ? ',\n' : '\n';
  }
  yield `${indent}}`;
}

/** A JSON text made at the top level, moved in by `indent` (its first line stays where the caller put it). */
function reindent(text: string, indent: string): string {
  return indent === '' || !text.includes('\n') ? text : text.replaceAll('\n', `\n${indent}`);
}
