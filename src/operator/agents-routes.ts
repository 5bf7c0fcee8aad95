// Operator API, EXTENSIONS 7: an account's request log (every key's), and
// the approvals its keys asked for: list, approve, reject. The console's
// approvals inbox and request log stand on these routes.
import { Type } from 'typebox';
import { Closed, ListOf, Nullable, Uuid } from '../platform/contract/schema.ts';
import { Approval, type ApprovalStatus } from '../platform/operations/agents-hook.ts';
import { decideApproval, findApproval, listApprovals } from '../modules/agents/approvals/approvals.ts';
import { listRequestLogs } from '../modules/agents/request-log/queries.ts';
import { getAccount } from '../modules/accounts/service.ts';
import { RequestLogEntry, RequestLogQueryFields } from '../modules/agents/schema.ts';
import { findEvent } from '../modules/events/queries.ts';
import { Envelope } from '../modules/events/schema.ts';
import { adminRoute } from './route.ts';

const TAGS = ['Agents'];
const AccountId = Closed({ id: Uuid() });
const ApprovalId = Closed({ id: Type.String({ minLength: 1, maxLength: 100 }) });
const STATUSES = ['pending', 'approved', 'rejected', 'expired', 'executed'];

/** The operator's view: the approval, the account and the key that asked. */
const OperatorApproval = Closed(
  {
    ...Approval.properties,
    account_id: Uuid(),
    key_prefix: Nullable('string', { description: 'The key that asked.' }),
    key_name: Nullable('string', { description: 'Its name, as the operator gave it when issuing the key.' }),
  },
  { $id: 'OperatorApproval' },
);
const Decision = Closed({
  reason: Type.Optional(Type.String({ maxLength: 2000, description: 'Why; the agent reads it in the approval.' })),
  decided_by: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Who decided (default "operator").' })),
});

const decide =
  (decision: 'approved' | 'rejected') =>
  async (s: Parameters<Parameters<typeof adminRoute>[0]['handler']>[0], input: { id: string; reason?: string; decided_by?: string }) => {
    await s.db.tx((tx) => decideApproval(tx, input.id, decision, input.decided_by ?? 'operator', input.reason ?? null));
    return { data: await findApproval(s.db, input.id) };
  };

export const agentsRoutes = [
  adminRoute({
    name: 'list_account_request_logs',
    method: 'GET',
    path: '/accounts/:id/request-logs',
    tags: TAGS,
    summary: "An account's request log (every key), newest first",
    description:
      'One entry per REST request and MCP tool call made with a valid key of the account, whatever its answer (EXTENSIONS 7). Filters: ' +
      'key_prefix, operation, status (404 or a class such as 4xx), writes, errors, since, until. Kept 30 days.',
    params: AccountId,
    query: Closed({ ...RequestLogQueryFields, key_prefix: Type.Optional(Type.String({ minLength: 1, maxLength: 20 })) }),
    output: ListOf(RequestLogEntry),
    handler: async (s, { id, ...filter }) => {
      await getAccount(s.db, id);
      return listRequestLogs(s.db, s.cursors, { accountId: id }, filter);
    },
  }),
  adminRoute({
    name: 'get_account_event',
    method: 'GET',
    path: '/accounts/:id/events/:eventId',
    tags: TAGS,
    summary: 'One event of the account (what a request log entry committed)',
    description: 'The envelope webhooks deliver and the events feed lists; 404 once the event is past its 30 days.',
    params: Closed({ id: Uuid(), eventId: Uuid() }),
    output: Closed({ data: Envelope }),
    handler: async (s, input) => ({ data: (await findEvent(s.db, input.id, input.eventId)) as never }),
  }),
  adminRoute({
    name: 'list_account_approvals',
    method: 'GET',
    path: '/accounts/:id/approvals',
    tags: TAGS,
    summary: "An account's approvals, newest first",
    description: 'status filters (pending: waiting for a decision and not expired). At most `limit` (default 100), newest first.',
    params: AccountId,
    query: Closed({
      status: Type.Optional(Type.Unsafe<ApprovalStatus>({ type: 'string', enum: STATUSES })),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
    }),
    output: Closed({ data: Type.Array(OperatorApproval) }),
    handler: async (s, input: { id: string; status?: ApprovalStatus; limit?: number }) => {
      const account = await getAccount(s.db, input.id);
      const rows = await listApprovals(s.db, input.id, input.status, input.limit ?? 100);
      return { data: rows.map((row) => ({ ...row, account_id: account.id })) };
    },
  }),
  adminRoute({
    name: 'get_operator_approval',
    method: 'GET',
    path: '/approvals/:id',
    tags: TAGS,
    summary: 'One approval',
    description: '',
    params: ApprovalId,
    output: Closed({ data: OperatorApproval }),
    handler: async (s, input) => ({ data: await findApproval(s.db, input.id) }),
  }),
  adminRoute({
    name: 'approve_approval',
    method: 'POST',
    path: '/approvals/:id/approve',
    tags: TAGS,
    summary: 'Approve: the key may now repeat its request once',
    description: 'Only a pending, unexpired approval can be decided; otherwise 409 (details.reason approval_decided or approval_expired).',
    params: ApprovalId,
    body: Decision,
    output: Closed({ data: OperatorApproval }),
    handler: decide('approved'),
  }),
  adminRoute({
    name: 'reject_approval',
    method: 'POST',
    path: '/approvals/:id/reject',
    tags: TAGS,
    summary: 'Reject: the repeated request is refused 403 approval_rejected',
    description: 'Only a pending, unexpired approval can be decided; otherwise 409 (details.reason approval_decided or approval_expired).',
    params: ApprovalId,
    body: Decision,
    output: Closed({ data: OperatorApproval }),
    handler: decide('rejected'),
  }),
];
