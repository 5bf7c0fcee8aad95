// COPY ... TO STDOUT on a transaction's client, as a stream of the rows'
// bytes (an export's body). pg-copy-streams speaks the protocol: it takes the
// connection's socket from pg for the COPY and hands it back after. Only how a
// socket read becomes COPY data is ours (compactCopyData): the library cuts
// each CopyData message out as a Buffer of its own and joins them again, an
// allocation per row (a million for an export of a million orders), where
// the payloads can be moved together inside the read they arrived in.
import type { Socket } from 'node:net';
import { Transform, pipeline, type Readable } from 'node:stream';
import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';

/** What a COPY stream buffers before it pauses the connection: the default 16 kB paused it for every socket read. */
const COPY_CHUNK_BYTES = 1 << 20;

/** The protocol's message codes that COPY out reads (PostgreSQL's protocol-message-formats). */
const ERROR_RESPONSE = 0x45;
const COPY_DATA = 0x64;
/** Messages that may come between CopyData without ending the COPY; any other ends it (CopyDone, normally). */
const INTERSPERSED = new Set([
  0x48 /* CopyOutResponse */,
  COPY_DATA,
  0x53 /* ParameterStatus */,
  0x4e /* NoticeResponse */,
  0x41 /* NotificationResponse */,
]);
/** A message's header: its code and its length (which counts itself). */
const HEADER_BYTES = 5;

/** The parts of pg-copy-streams' CopyStreamQuery that its `_parse` uses: they stay its own (package.json pins the version they were read from). */
interface CopyStreamInternals {
  push(chunk: Buffer | null): boolean;
  _buffer: { push(chunk: Buffer): void };
  _detach(): void;
  _cleanup(): void;
}

/** Where a COPY stream is between socket reads: inside a message (its code, bytes left), or holding a header cut by the read's end. */
export interface CopyDataState {
  code: number;
  unread: number;
  header?: Buffer;
}

/**
 * One socket read of a COPY out: the payloads of its CopyData messages are
 * moved to the read's front (each lands at or before where it was, so a
 * message is never overwritten before it is read) and pushed as one slice of
 * it. As the library's parser does: an ErrorResponse hands the read from
 * that message on back to pg, which reports the error (the rows before it
 * are pushed first); any other message that is not interspersed ends the
 * COPY, and the bytes after it go back to pg.
 */
export function compactCopyData(this: CopyStreamInternals & { state: CopyDataState }, read: Buffer): boolean | undefined {
  const state = this.state;
  const chunk = state.header ? Buffer.concat([state.header, read]) : read;
  state.header = undefined;
  let length = 0;
  let at = 0;
  let done = false;
  while (at < chunk.length && !done) {
    if (state.unread > 0) {
      const n = Math.min(state.unread, chunk.length - at);
      if (state.code === COPY_DATA) length += length === at ? n : chunk.copy(chunk, length, at, at + n);
      at += n;
      state.unread -= n;
    } else {
      if (chunk[at] === ERROR_RESPONSE) {
        if (length > 0) this.push(chunk.subarray(0, length));
        this._buffer.push(chunk.subarray(at));
        this._detach();
        return undefined;
      }
      if (chunk.length - at < HEADER_BYTES) {
        state.header = Buffer.from(chunk.subarray(at));
        break;
      }
      state.code = chunk[at];
      state.unread = chunk.readUInt32BE(at + 1) - 4;
      at += HEADER_BYTES;
    }
    if (state.unread === 0 && !INTERSPERSED.has(state.code)) done = true;
  }
  const drained = length > 0 ? this.push(chunk.subarray(0, length)) : true;
  if (done) {
    this._buffer.push(chunk.subarray(at));
    this._detach();
    this.push(null);
    this._cleanup();
  }
  return drained;
}

/**
 * The COPY's stream, which ends only once PostgreSQL said the COPY completed:
 * pg-copy-streams ends its stream at the first message that is not COPY data,
 * an error's too, so that a cut COPY would otherwise end like a whole one. A
 * stream given up before the end (the reader went away) leaves the server
 * still sending: the only way out of COPY is to drop the connection, which
 * `abandon` marks broken so it is not pooled again.
 */
export function copyOutOf(client: pg.PoolClient, text: string, abandon: (err: Error) => void): Readable {
  // handleCommandComplete is pg's hook on a query (its typings leave it out); _parse is the library's parser of a socket read.
  const copy = copyTo(text, { highWaterMark: COPY_CHUNK_BYTES }) as ReturnType<typeof copyTo> & {
    handleCommandComplete(message: unknown): void;
    _parse: typeof compactCopyData;
    state: CopyDataState;
  };
  copy.state = { code: 0, unread: 0 };
  copy._parse = compactCopyData;
  const completed = new Promise<void>((resolve, reject) => {
    const handleCommandComplete = copy.handleCommandComplete.bind(copy);
    copy.handleCommandComplete = (message: unknown) => {
      handleCommandComplete(message);
      resolve();
    };
    copy.once('error', reject);
  });
  completed.catch(() => {});
  let done = false;
  const out = new Transform({
    highWaterMark: COPY_CHUNK_BYTES,
    transform: (chunk, _encoding, next) => next(null, chunk),
    flush: (next) => void completed.then(() => ((done = true), next()), next),
  });
  pipeline(client.query(copy), out, () => {});
  out.once('close', () => {
    if (done) return;
    abandon(new Error('COPY abandoned before its end'));
    (client as unknown as { connection: { stream: Socket } }).connection.stream.destroy();
  });
  return out;
}
