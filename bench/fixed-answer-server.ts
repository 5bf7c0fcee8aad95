// Bench only: an HTTP server that answers every request with fixed bytes
// and does nothing else, the floor under any server of those answers on
// this machine (the socket, the kernel, Node's HTTP). read-path.ts runs it
// with a REST page and an MCP answer the service sent, to learn how much of
// MCP's distance from REST is only its answer's size.
//   FIXED_GET_BODY=<file> FIXED_POST_BODY=<file> node bench/fixed-answer-server.ts
import fs from 'node:fs';
import http from 'node:http';

const getBody = fs.readFileSync(process.env.FIXED_GET_BODY!);
const postBody = fs.readFileSync(process.env.FIXED_POST_BODY!);
const server = http.createServer((request, response) => {
  const body = request.method === 'POST' ? postBody : getBody;
  request.resume();
  request.on('end', () => {
    response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
    response.end(body);
  });
});
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  console.log(`API  http://127.0.0.1:${port}/api/v1`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
