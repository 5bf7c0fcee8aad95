// The operator console at /admin: the React app in console/, built into
// console/dist at install (npm's prepare), served from this process with no
// CDN. Its client-side routes (/admin/accounts/...) all answer the app's
// index.html; /admin/api and /admin/docs keep their own routes. Without a
// build (npm ci --omit=dev) /admin explains how to get one instead of failing.
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyStatic from '@fastify/static';
import { AppError } from '../platform/contract/errors.ts';
import { OPERATOR_BASE } from './route.ts';

export const CONSOLE_DIST = path.join(import.meta.dirname, '../../console/dist');

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Merx operator console</title>
<style>body{font:16px/1.6 system-ui,sans-serif;max-width:680px;margin:4em auto;padding:0 1em;color:#1b2130}code{background:#f0f2f5;padding:0 .3em;border-radius:3px}</style>
</head><body><h1>The operator console is not built</h1>
<p>This installation has no <code>console/dist</code>. <code>npm install</code> (or <code>npm ci</code>) builds it; an install without
dev dependencies (<code>--omit=dev</code>) cannot. Build it with <code>npm run build:console</code> after a full install, or use the
operator API directly: <a href="${OPERATOR_BASE}/openapi.json">${OPERATOR_BASE}</a> (reference at <a href="/admin/docs">/admin/docs</a>).</p>
</body></html>`;

/** The app loads nothing but its own files and talks only to this origin. */
const POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function registerConsole(app: FastifyInstance, dist = CONSOLE_DIST): void {
  const index = path.join(dist, 'index.html');
  const built = fs.existsSync(index);
  if (built) {
    // Hashed file names: cache for a year.
    app.register(fastifyStatic, { root: path.join(dist, 'assets'), prefix: '/admin/assets/', immutable: true, maxAge: '365d', wildcard: true });
  }
  const page = built ? fs.readFileSync(index) : null;
  const serveApp = async (request: FastifyRequest, reply: FastifyReply) => {
    const url = request.url.split('?')[0];
    if (url === OPERATOR_BASE || url.startsWith(`${OPERATOR_BASE}/`) || url.startsWith('/admin/assets/')) {
      throw new AppError('not_found', `no route ${request.method} ${url}`);
    }
    reply.header('Cache-Control', 'no-cache').header('Content-Security-Policy', POLICY);
    if (!page) return reply.code(503).type('text/html; charset=utf-8').send(NOT_BUILT);
    return reply.type('text/html; charset=utf-8').send(page);
  };
  app.get('/admin', serveApp);
  app.get('/admin/*', serveApp);
}
