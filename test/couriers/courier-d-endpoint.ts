// courier_d's side of the wire for the test: an in-memory HTTP server that
// speaks the protocol in courier-d.ts and lets the test move a consignment.
import http from 'node:http';
import crypto from 'node:crypto';
import { renderLabel } from '../../src/couriers/simulator/label.ts';

export const COURIER_D_KEY = 'd-test-key-0123';

interface Consignment {
  ref: string;
  reference: string;
  cancelled: boolean;
  history: Array<{ when: string; state: string; text: string }>;
}

export async function startCourierD() {
  const consignments = new Map<string, Consignment>();
  const calls: string[] = [];
  const answer = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    calls.push(`${req.method} ${url.pathname}`);
    const send = (status: number, body?: unknown, type = 'application/json') => {
      res.writeHead(status, { 'content-type': type });
      res.end(body === undefined ? undefined : Buffer.isBuffer(body) ? body : JSON.stringify(body));
    };
    if (req.headers['x-d-key'] !== COURIER_D_KEY) return send(401, { problem: 'bad key' });
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const ref = /^\/consignments\/([^/]+)/.exec(url.pathname)?.[1];
    const consignment = ref ? consignments.get(decodeURIComponent(ref)) : undefined;
    if (req.method === 'POST' && url.pathname === '/consignments') {
      const body = JSON.parse(raw);
      const created: Consignment = {
        ref: `D-${crypto.randomInt(1e8, 1e9)}`,
        reference: String(body.reference),
        cancelled: false,
        history: [{ when: new Date().toISOString(), state: 'booked', text: 'Booked' }],
      };
      consignments.set(created.ref, created);
      return send(201, { ref: created.ref, fee: 2.75 });
    }
    if (req.method === 'GET' && url.pathname === '/consignments') {
      const refs = (url.searchParams.get('refs') ?? '').split(',').filter(Boolean);
      return send(200, { items: refs.flatMap((r) => (consignments.has(r) ? [{ ref: r, history: consignments.get(r)!.history }] : [])) });
    }
    if (!consignment) return send(404, { problem: 'unknown consignment' });
    if (req.method === 'GET' && url.pathname.endsWith('/label')) {
      const pdf = await renderLabel({
        courier: 'courier d',
        trackingNumber: consignment.ref,
        reference: consignment.reference,
        recipient: [],
        codAmount: 0,
        weightKg: 1,
      });
      return send(200, pdf, 'application/pdf');
    }
    if (req.method === 'DELETE') {
      consignment.cancelled = true;
      consignment.history.push({ when: new Date().toISOString(), state: 'void', text: 'Voided' });
      return send(204);
    }
    return send(404, { problem: 'no such route' });
  };
  // A failure is answered 500, where the courier client sees it, rather than left to end the test process.
  const server = http.createServer((req, res) => void answer(req, res).catch((err) => res.writeHead(500).end(String(err))));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}`,
    calls,
    consignments,
    /** The courier records a new state for a consignment (seen at the next poll). */
    move(ref: string, state: string, text: string) {
      consignments.get(ref)!.history.push({ when: new Date(Date.now() + 1000).toISOString(), state, text });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
