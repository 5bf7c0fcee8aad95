// Sends an answer PostgreSQL wrote (JsonText) as its UTF-8 bytes.
import type { FastifyReply } from 'fastify';
import { returnAnswerBytes } from '../platform/answer-bytes.ts';
import type { JsonText } from '../platform/json-text.ts';

/**
 * Sends JSON text as its UTF-8 bytes, in a lent buffer given back when the
 * response has finished: by then the socket has written it (a response cut
 * short never finishes, and its buffer is the garbage collector's).
 */
export function sendJsonText(reply: FastifyReply, json: JsonText): FastifyReply {
  const bytes = json.bytes();
  reply.raw.once('finish', () => returnAnswerBytes(bytes));
  return reply.type('application/json; charset=utf-8').send(bytes);
}
