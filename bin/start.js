#!/usr/bin/env node
// `npm start`: checks the Node version first, then starts the service.
import { requireSupportedNode } from './node-check.js';

requireSupportedNode();
await import('../src/main.ts');
