#!/usr/bin/env node
// `npx merx <command>`: runs on the Node 24 that the project pins (npm puts
// node_modules/.bin first on PATH), which strips the TypeScript types itself.
// The version is checked before any .ts is loaded.
import { requireSupportedNode } from './node-check.js';

requireSupportedNode();
await import('../src/cli.ts');
