// RFC 9457 problem details for every error the service answers.

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

/** Maps any error a route can throw to a status and a problem body; internal details never leak. */
export function errorResponse(error: unknown, instance: string): { status: number; body: Problem } {
  if (error instanceof HttpProblem) return { status: error.status, body: problem(error.status, error.title, error.detail, instance, error.errors) };
  const e = error as { code?: string; statusCode?: number; message?: string; validation?: unknown };
  switch (e.code) {
    case 'FST_REQ_FILE_TOO_LARGE':
    case 'FST_FILES_LIMIT':
    case 'FST_PARTS_LIMIT':
      return { status: 413, body: problem(413, 'Upload too large', 'The upload exceeds the limits of one job (total size or number of files). Split it into several jobs.', instance) };
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return { status: 400, body: problem(400, 'Bad Request', 'Send the files as multipart/form-data.', instance) };
  }
  if (e.validation) return { status: 400, body: problem(400, 'Bad Request', e.message ?? 'The request does not match the API.', instance) };
  if (e.statusCode && e.statusCode >= 400 && e.statusCode < 500) return { status: e.statusCode, body: problem(e.statusCode, 'Bad Request', e.message ?? 'The request was refused.', instance) };
  return { status: 500, body: problem(500, 'Internal Server Error', 'The service failed to handle the request; try again later.', instance) };
}
