// Sends an answer PostgreSQL wrote (JsonText) as its UTF-8 bytes.
import type { FastifyReply } from 'fastify';
import type { AnswerBufferPool, JsonText } from '../platform/read-path/index.ts';

/**
 * Sends JSON text as its UTF-8 bytes, in a pooled buffer released when the
 * response has finished: by then the socket has written it (a response cut
 * short never finishes, and its buffer is the garbage collector's).
 * `buffers`: the service's pool (Services.answerBuffers).
 */
export function sendJsonText(reply: FastifyReply, json: JsonText, buffers: AnswerBufferPool): FastifyReply {
  const bytes = json.bytes(buffers);
  reply.raw.once('finish', () => buffers.release(bytes));
  return reply.type('application/json; charset=utf-8').send(bytes);
}
