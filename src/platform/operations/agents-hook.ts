// The agents hook: the one place where the operation pipeline meets the
// agents room (src/modules/agents/: approvals and the request log, EXTENSIONS 7),
// which owns their rules and their tables. The platform declares here what
// it asks and what it reports; server.ts installs the room's implementation
// as `services.agents`.
//
// Before an operation runs, execute() decides its mode (execute.ts modeOf):
// a write by a key whose writes wait for a person asks for approval instead
// (askApproval); a write that names an approval runs only as approved
// (runApproved). After a call is answered, its transport reports it (record),
// with the RequestTrace the pipeline carried (request-trace.ts: its id, the
// ids it named, the events it committed).
//
// The approval's answer is part of the interface: the pipeline stores it
// under an Idempotency-Key, REST sends it as 202 with Location, MCP as a
// result with _meta.approval_id, and write operations declare its schema
// as their 202 answer (REST) and as a branch of their tool's outputSchema.
import { Type } from 'typebox';
import { Closed, DateTime, Nullable, NullableDateTime, Uuid } from '../contract/schema.ts';
import type { Caller, Operation } from './operation.ts';
import type { ExecuteOptions } from './steps.ts';
import type { AnsweredCall, LoggedKey, RequestTrace } from './request-trace.ts';
import type { Services } from '../services.ts';

/** What the pipeline asks the agents room, and what it reports to it (src/modules/agents/hook.ts implements it). */
export interface AgentsHook {
  /** A write by a key whose writes wait for a person: the approval it asks for, instead of performing it. */
  askApproval(services: Services, op: Operation, caller: Caller, input: Record<string, unknown>, options: ExecuteOptions): Promise<ApprovalAnswer>;
  /** A write that names an approval (options.approvalId): performed only as approved, exactly once; its result. */
  runApproved(services: Services, op: Operation, caller: Caller, input: Record<string, unknown>, options: ExecuteOptions): Promise<unknown>;
  /** A call made with a valid key, once answered, as its transport knows it: the request log's entry. Never waits. */
  record(key: LoggedKey, trace: RequestTrace, call: AnsweredCall): void;
  /** Resolves once every call recorded so far is written (or failed): for a graceful stop. */
  flushed(): Promise<void>;
}

declare module '../services.ts' {
  interface Services {
    /** EXTENSIONS 7: approvals and the request log (the agents room), as installed by server.ts. */
    agents: AgentsHook;
  }
}

/** The header that names the approval a repeated write runs under (MCP: _meta.approval_id). */
export const APPROVAL_HEADER = 'Merx-Approval';

export type ApprovalStatus = 'pending' | 'approved' | 'rejected' | 'expired' | 'executed';

export interface ApprovalView {
  id: string;
  status: ApprovalStatus;
  operation: string;
  arguments: Record<string, unknown>;
  preview: Record<string, unknown> | null;
  effects: string[];
  resource_etag: string | null;
  requested_at: string;
  expires_at: string;
  decided_at: string | null;
  decided_by: string | null;
  reason: string | null;
  executed_at: string | null;
  result_status: number | null;
}

/** What execute() answers instead of performing a write: REST sends it as 202, MCP as a result with _meta.approval_id. */
export class ApprovalAnswer {
  readonly approval: ApprovalView;
  /** The same Idempotency-Key asked before: this is that approval, not a new one. */
  readonly replayed: boolean;
  constructor(approval: ApprovalView, replayed: boolean) {
    this.approval = approval;
    this.replayed = replayed;
  }
  get body() {
    return { data: this.approval };
  }
  get location() {
    return `/api/v1/approvals/${this.approval.id}`;
  }
}

/** The Approval, as the API, MCP and the operator API show it. */

export const Approval = Closed(
  {
    id: Uuid(),
    status: Type.Unsafe<'pending' | 'approved' | 'rejected' | 'expired' | 'executed'>({
      type: 'string',
      enum: ['pending', 'approved', 'rejected', 'expired', 'executed'],
      description: 'expired: 24 hours passed before it was used (pending or approved ones only).',
    }),
    operation: Type.String({ description: 'The MCP tool name of the operation asked for, e.g. update_order.' }),
    arguments: Type.Object({}, { additionalProperties: true, description: 'Path parameters and body as given, as one object.' }),
    preview: Type.Unsafe<Record<string, unknown> | null>({
      type: ['object', 'null'],
      additionalProperties: true,
      description: "The operation's dry-run answer for these arguments; null for an operation without a dry run.",
    }),
    effects: Type.Array(Type.String(), { description: 'What performing it would do, one English sentence each.' }),
    resource_etag: Nullable('string', {
      description:
        "update_order, update_product, update_webhook: the target's ETag when asked; the approved request runs only while it is unchanged. null otherwise.",
    }),
    requested_at: DateTime(),
    expires_at: DateTime({ description: '24 hours after requested_at.' }),
    decided_at: NullableDateTime(),
    decided_by: Nullable('string'),
    reason: Nullable('string'),
    executed_at: NullableDateTime(),
    result_status: Nullable('integer', { description: 'The HTTP status the approved request was answered with.' }),
  },
  { $id: 'Approval' },
);

export const ApprovalAnswerBody = Closed({ data: Approval }, { $id: 'ApprovalAnswer' });
