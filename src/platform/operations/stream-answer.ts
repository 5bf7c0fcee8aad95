// An answer that is a stream of bytes rather than one JSON document (EXTENSIONS 8,
// exports): REST sends its body as it is read, gzipped when the client accepts it.
// A body that errors after the headers went out ends the response without its
// final chunk, so the client sees a broken transfer, never a short file.
import type { Readable } from 'node:stream';

export class StreamAnswer {
  readonly contentType: string;
  readonly body: Readable;
  constructor(contentType: string, body: Readable) {
    this.contentType = contentType;
    this.body = body;
  }
}
