/**
 * The machine's floor for the latency step, run as a child process: Node's
 * own HTTP server, no framework, that reads the request body without
 * parsing it and answers the bare route's fixed JSON. Nothing a validation
 * server could do costs less per request, so its p99 at the service's rate
 * is what this machine gives any server: where it misses the target, the
 * machine does, whatever runs on it (http.bench.ts, step 2).
 *
 * Listens on 127.0.0.1:$PORT; SIGTERM closes it.
 */
import { createServer } from 'node:http';
import { FIXED_ANSWER } from './fixed-answer.ts';

const ANSWER_TEXT = JSON.stringify(FIXED_ANSWER);
const HEADERS = { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(ANSWER_TEXT) };

const server = createServer((request, response) => {
  // Drained, not kept: the body arrives and is paid for as on any server, but nothing is parsed.
  request.resume();
  request.on('end', () => {
    response.writeHead(200, HEADERS);
    response.end(ANSWER_TEXT);
  });
});

process.once('SIGTERM', () => {
  server.close(() => process.exit(0));
  // A request still in flight would hold close() open; the benchmark has stopped its load by now.
  server.closeAllConnections();
});

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
