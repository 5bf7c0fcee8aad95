// The agents room's side of the agents hook (src/platform/operations/agents-hook.ts),
// installed by server.ts as `services.agents`: the approval gate (approvals/)
// and the request log (request-log/), behind the one interface the platform's
// operation pipeline and the transports call.
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../../platform/db/db.ts';
import type { AgentsHook } from '../../platform/operations/agents-hook.ts';
import { askApproval, performApproved } from './approvals/gate.ts';
import { RequestLog } from './request-log/log.ts';

export function agentsHook(db: Db, log: FastifyBaseLogger): AgentsHook {
  const requestLog = new RequestLog(db, log);
  return {
    askApproval,
    runApproved: performApproved,
    record: (key, trace, call) => requestLog.record(key, trace, call),
    flushed: () => requestLog.flushed(),
  };
}
