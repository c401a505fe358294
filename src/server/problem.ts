// RFC 9457 problem details: what the service answers for an error, and HttpProblem, the error that becomes one.
// Below http/ and identity/, which both refuse requests with it (http/error-response.ts maps every error to an answer).

export interface ProblemFileError {
  readonly fileName: string;
  readonly detail: string;
}

export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly instance?: string;
  /** The request's id (X-Request-Id), added to every problem answer as it is sent (http/request-id.ts). */
  readonly requestId?: string;
  readonly errors?: readonly ProblemFileError[];
}

/** An error that becomes a problem response with this status. */
export class HttpProblem extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
    readonly errors?: readonly ProblemFileError[],
  ) {
    super(detail);
    this.name = 'HttpProblem';
  }
}

export function problem(status: number, title: string, detail: string, instance?: string, errors?: readonly ProblemFileError[]): Problem {
  return { type: 'about:blank', title, status, detail, ...(instance ? { instance: instance.split('?')[0]! } : {}), ...(errors?.length ? { errors } : {}) };
}
