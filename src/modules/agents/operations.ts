// EXTENSIONS 7, for the key itself: its own request log, and the approvals
// it asked for. Any valid key may call both (no scope), so an agent holding a
// read-only or an approval key can always see what it did and what waits.
import { Type } from 'typebox';
import { defineOperation } from '../../platform/operations/operation.ts';
import { Closed } from '../../platform/contract/schema.ts';
import { APPROVAL_HEADER, ApprovalAnswerBody } from '../../platform/operations/agents-hook.ts';
import { getApproval } from './approvals/approvals.ts';
import { listRequestLogs } from './request-log/queries.ts';
import { REQUEST_LOG_RETENTION_DAYS } from './request-log/log.ts';
import { RequestLogPage, RequestLogQuery } from './schema.ts';

const TAGS = ['Agents'];

export const listRequestLogsOp = defineOperation({
  name: 'list_request_logs',
  method: 'GET',
  path: '/api/v1/request-logs',
  scope: null,
  tags: TAGS,
  summary: "This key's requests, newest first",
  description: "This key's request log (30 days): operation, status, error, duration, ids, events.",
  detail:
    'One entry per REST request and per MCP tool call made with this key, whatever its answer: operation, path, status, error code, dry run, ' +
    'idempotency key, duration, the ids it named and the events it committed. Never a body, a query value, a header value or a secret. ' +
    `Kept ${REQUEST_LOG_RETENTION_DAYS} days. Filters: operation, status (404, or a class such as 4xx), writes, errors, since, until. An entry may appear ` +
    'a moment after its answer: entries are written in batches.',
  query: RequestLogQuery,
  output: RequestLogPage,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  handler: async (ctx, input) => listRequestLogs(ctx.db, ctx.cursors, { accountId: ctx.caller.accountId, keyId: ctx.caller.keyId }, input),
});

export const getApprovalOp = defineOperation({
  name: 'get_approval',
  method: 'GET',
  path: '/api/v1/approvals/:id',
  scope: null,
  tags: TAGS,
  summary: 'An approval this key asked for',
  description: "An approval this key's write waits for; once approved, repeat the write with approval_id.",
  detail:
    'A write by a key issued with writes "approval" is not performed: it answers 202 (MCP: a result with _meta.approval_id) with an ' +
    'approval holding the dry-run preview and its effects. Poll this until status is approved (or rejected), then repeat the exact request ' +
    `with the header ${APPROVAL_HEADER}: <id> (MCP: _meta.approval_id); it runs once. Another key's approval is 404.`,
  params: Closed({ id: Type.String({ minLength: 1, maxLength: 100 }) }),
  output: ApprovalAnswerBody,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  handler: async (ctx, input) => ({ data: await getApproval(ctx.db, ctx.caller.keyId, input.id) }),
});

export const agentOperations = [listRequestLogsOp, getApprovalOp];
