// Storage faults are the service's, not the request's: a full data disk is 507 Insufficient Storage, a database or
// object store that does not answer is 503 with Retry-After (which the client's upload retries); anything else
// stays 500. The errors are those node:fs, pg and the AWS SDK throw.
import { describe, expect, test } from 'vitest';
import { errorResponse, storageFault } from '../../../src/server/http/error-response.js';

const fsError = (code: string) => Object.assign(new Error(`${code}: something, write '/var/lib/signgate/jobs/x'`), { code });

describe('storage faults', () => {
  test.each([
    ['ENOSPC', fsError('ENOSPC'), 'full', 507],
    ['EDQUOT', fsError('EDQUOT'), 'full', 507],
    ['PostgreSQL refused (ECONNREFUSED)', fsError('ECONNREFUSED'), 'outage', 503],
    ['PostgreSQL shutting down (57P01)', Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }), 'outage', 503],
    ['pg connection terminated', new Error('Connection terminated unexpectedly'), 'outage', 503],
    ['S3 503', Object.assign(new Error('Service Unavailable'), { name: 'ServiceUnavailable', $metadata: { httpStatusCode: 503 } }), 'outage', 503],
    ['wrapped in a cause', new Error('upload failed', { cause: fsError('ENOSPC') }), 'full', 507],
  ])('%s', (_name, error, fault, status) => {
    expect(storageFault(error)).toBe(fault);
    const answer = errorResponse(error, '/assembly-signing/v1.0/assemblies');
    expect(answer.status).toBe(status);
    expect(JSON.stringify(answer.body)).not.toContain('/var/lib');
  });

  test('other errors stay 500', () => {
    expect(storageFault(new TypeError('x is undefined'))).toBeUndefined();
    expect(errorResponse(new TypeError('x is undefined'), '/').status).toBe(500);
    expect(errorResponse(fsError('EACCES'), '/').status).toBe(500);
  });
});
