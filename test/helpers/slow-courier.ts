// A courier that answers late: the courier simulator run standalone, behind
// an HTTP proxy that holds every request for `delayMs` before passing it on.
// For the console's progress on a slow courier call (issue 41).
import http from 'node:http';
import { standaloneSimulator } from '../../src/couriers/simulator/standalone.ts';

export interface SlowCourier {
  url: string;
  calls: () => number;
  close: () => Promise<void>;
}

export async function startSlowCourier(delayMs: number): Promise<SlowCourier> {
  const sim = await standaloneSimulator(0);
  let calls = 0;
  // Any failure is answered 502: the promise never rejects.
  const forward = async (request: http.IncomingMessage, response: http.ServerResponse, chunks: Buffer[]) => {
    try {
      const headers = Object.fromEntries(
        Object.entries(request.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name)),
      ) as Record<string, string>;
      const body = chunks.length ? Buffer.concat(chunks) : undefined;
      const answer = await fetch(`${sim.url}${request.url}`, { method: request.method, headers, body });
      response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/octet-stream' });
      response.end(Buffer.from(await answer.arrayBuffer()));
    } catch (err) {
      response.writeHead(502).end(String(err));
    }
  };
  const server = http.createServer((request, response) => {
    calls++;
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      setTimeout(() => void forward(request, response, chunks), delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}`,
    calls: () => calls,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await sim.close();
    },
  };
}
