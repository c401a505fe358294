// Whole numbers in a request's path and query, as the API's contract writes them: decimal digits, without sign,
// point, exponent, spaces or leading zeros. Fastify's schema validation coerces types (Ajv's coerceTypes), which
// reads "12345.0", "+12345", " 12345", "0x3039" and "1.2345e4" as 12345: a hook checks the text first, on every route
// whose params or querystring schema has an integer, and answers 400 for any other writing.
import type { FastifyRequest, RouteOptions } from 'fastify';
import { HttpProblem } from '../problem.js';

/** A whole number as the contract writes it: 0, or up to 16 digits without a leading zero (then a safe integer). */
const WHOLE = /^(0|[1-9][0-9]{0,15})$/;

/** The names of the integer properties of a params or querystring schema. */
function integerNames(schema: unknown): string[] {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> } | undefined)?.properties ?? {};
  return Object.entries(properties)
    .filter(([, s]) => s.type === 'integer')
    .map(([name]) => name);
}

/**
 * Refuses `value` (a parameter as the request wrote it) unless it is a whole number written as the contract does.
 * @throws HttpProblem 400 naming the parameter and what it was given
 */
function refuseUnlessWhole(place: string, name: string, value: unknown): void {
  // Absent: the schema says whether it must be there; given twice (a list): the schema refuses it.
  if (typeof value !== 'string') return;
  if (WHOLE.test(value) && Number.isSafeInteger(Number(value))) return;
  const shown = JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  const rule = `no sign, point, exponent, spaces or leading zeros; at most ${Number.MAX_SAFE_INTEGER}`;
  throw new HttpProblem(400, 'Bad Request', `The ${place} ${name} is ${shown}: not a whole number written in decimal digits (${rule}).`);
}

/** An onRoute hook: a route whose path or query takes whole numbers answers 400 for any other writing of them. */
export function wholeNumbersOnly(route: RouteOptions): void {
  const params = integerNames(route.schema?.params);
  const query = integerNames(route.schema?.querystring);
  if (params.length === 0 && query.length === 0) return;
  const check = async (request: FastifyRequest) => {
    for (const name of params) refuseUnlessWhole('path parameter', name, (request.params as Record<string, unknown>)[name]);
    for (const name of query) refuseUnlessWhole('query parameter', name, (request.query as Record<string, unknown>)[name]);
  };
  const before = route.preValidation === undefined ? [] : Array.isArray(route.preValidation) ? route.preValidation : [route.preValidation];
  route.preValidation = [...before, check];
}
