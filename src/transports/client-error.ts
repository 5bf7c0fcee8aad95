// Requests refused before any route runs are answered in the contract's
// error shape with X-Deploy-SHA, like any other: what Node's HTTP parser
// refuses (headers or URL over 16 KB, malformed HTTP, a client too slow to
// send its request) and what Fastify's router refuses (bad percent-encoding,
// a path parameter over its length limit).
import http from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply } from 'fastify';
import { AppError, toAppError } from '../platform/contract/errors.ts';

function errorFor(code: string | undefined): AppError {
  if (code === 'HPE_HEADER_OVERFLOW') return new AppError('headers_too_large', 'the request line and headers must not exceed 16 KB together');
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return new AppError('request_timeout', 'the request was not received in time');
  return new AppError('validation_failed', 'the request is not valid HTTP');
}

export function clientErrorHandler(deploySha: string) {
  return (err: NodeJS.ErrnoException, socket: Socket) => {
    // A reset connection has nobody left to answer.
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const error = errorFor(err.code);
    const body = JSON.stringify(error.toBody());
    if (socket.writable) {
      socket.write(
        `HTTP/1.1 ${error.status} ${http.STATUS_CODES[error.status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nX-Deploy-SHA: ${deploySha}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy(err);
  };
}

export function frameworkErrorHandler(deploySha: string) {
  return (error: FastifyError, _request: unknown, reply: FastifyReply) => {
    let appError: AppError;
    if (error.code === 'FST_ERR_BAD_URL') appError = new AppError('validation_failed', 'the URL is malformed (invalid percent-encoding or UTF-8)');
    else if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') appError = new AppError('validation_failed', 'a path parameter is too long');
    else appError = toAppError(error);
    void reply
      .code(appError.status)
      .header('X-Deploy-SHA', deploySha)
      .type('application/json; charset=utf-8')
      .send(JSON.stringify(appError.toBody()));
  };
}

/** How much of a refused body is read and discarded so the client gets its 413 (past it, the connection is reset). */
const REFUSED_BODY_DRAIN_BYTES = 64 * 1024 * 1024;

/**
 * Issue 38: a body over the limit is refused before it is read, and the
 * connection closed after the answer. Closing a socket the client is still
 * sending on resets it, and a reset throws away the 413 the client had not
 * read yet (it saw EPIPE instead). So the rest of the body is read and
 * discarded first, up to a bound, and then the 413 goes out; the request
 * timeout bounds how long that can take.
 */
export function drainRefusedBody(request: http.IncomingMessage): Promise<void> {
  return new Promise((resolve) => {
    if (request.readableEnded || request.destroyed) return resolve();
    let read = 0;
    const done = () => {
      request.removeListener('data', count);
      resolve();
    };
    const count = (chunk: Buffer) => {
      read += chunk.length;
      if (read <= REFUSED_BODY_DRAIN_BYTES) return;
      request.socket.destroy();
      done();
    };
    request.on('data', count);
    request.once('end', done);
    request.once('close', done);
    request.resume();
  });
}
