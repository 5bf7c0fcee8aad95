// Loaded into a service under test (NODE_OPTIONS=--import) when
// MERX_MEMORY_PROBE names a file: every 100 ms it appends the process's
// memory (process.memoryUsage(), MB), so that a bench can say where a
// growth of RSS went (V8's heap, Buffers outside it, or neither: the
// allocator's own holdings).
import fs from 'node:fs';

const file = process.env.MERX_MEMORY_PROBE;
if (file) {
  // One file a process: two services may run under one bench.
  const fd = fs.openSync(`${file}.${process.pid}`, 'a');
  const mb = (n: number) => (n / 1048576).toFixed(1);
  setInterval(() => {
    const m = process.memoryUsage();
    fs.writeSync(fd, `${Date.now()} ${mb(m.rss)} ${mb(m.heapTotal)} ${mb(m.heapUsed)} ${mb(m.external)} ${mb(m.arrayBuffers)}\n`);
  }, 100).unref();
}
