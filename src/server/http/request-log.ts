// Which requests the service logs, and how: every request gets fastify's two lines ("incoming request" with the
// request, "request completed" with the answer and its time), except a job's status poll, which a client repeats
// until the job is finished: two lines a poll made the log mostly polls, each line a synchronous write (kept
// synchronous so that a kill -9 loses no line). A poll answered 2xx or 3xx is logged at debug level only; one that
// is refused gets one line at info (request, answer and time together; a 5xx also the error line every route writes).
// A scrape of GET /metrics, which Prometheus repeats every few seconds, is logged the same way.
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

export class QuietPollLog extends LogController {
  /** The route of a job's status, e.g. `/assembly-signing/v1.0/assemblies/:id/status`. */
  constructor(private readonly statusRoute: string) {
    super();
  }

  private isPoll(request: FastifyRequest): boolean {
    return request.method === 'GET' && (request.routeOptions.url === this.statusRoute || request.routeOptions.url === '/metrics');
  }

  override incomingRequest(request: FastifyRequest, reply: FastifyReply): void {
    if (!this.isPoll(request)) super.incomingRequest(request, reply);
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (!this.isPoll(request)) return super.requestCompleted(error, request, reply);
    if (error) reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    else if (reply.statusCode >= 400) reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
    else {
      const what = request.routeOptions.url === '/metrics' ? 'metrics scraped' : 'status poll answered';
      reply.log.debug({ req: request, res: reply, responseTime: reply.elapsedTime }, what);
    }
  }
}
