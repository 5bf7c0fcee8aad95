// The webhook sender's own thread (sender-thread.ts starts it): each attempt's
// HTTPS (TLS, HTTP, signing) runs here, off the event loop that serves API
// requests. Attempts and their outcomes cross in batches, one message per
// turn of either loop.
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { Senders } from './https-sender.ts';
import { checked, type SendAnswer, type SendRequest, type SendThreadOptions } from './sender-thread.ts';

if (!parentPort) throw new Error('sender-thread-worker.ts is the entry of a worker thread (sender-thread.ts)');
const port = parentPort;
const options = workerData as SendThreadOptions;
// On Linux a nice value is a thread's own (elsewhere it would slow the whole process); a refusal leaves the thread as it is.
if (process.platform === 'linux' && options.nice > 0) {
  try {
    os.setPriority(options.nice);
  } catch {
    // no lower priority: the deliveries still go out, only without yielding to requests
  }
}
const senders = new Senders();
let answers: SendAnswer[] = [];

/** Outcomes of one turn of this thread's loop go back as one message. */
function answer(a: SendAnswer): void {
  if (answers.push(a) > 1) return;
  setImmediate(() => {
    const batch = answers;
    answers = [];
    port.postMessage(batch);
  });
}

port.on('message', (message: SendRequest[] | 'close') => {
  if (message === 'close') {
    void senders.close().finally(() => port.close());
    return;
  }
  for (const r of message) {
    void senders.send(checked(r.target), r.delivery, r.self).then(
      (outcome) => answer({ id: r.id, outcome }),
      (err: Error) => answer({ id: r.id, outcome: { statusCode: null, error: `connection: ${err.message}`, responseBody: null } }),
    );
  }
});
