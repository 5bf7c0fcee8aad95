// EXTENSIONS 7: the Approval, as the API, MCP and the operator API show it.
// Write operations declare it as their 202 answer (REST) and as a branch of
// their tool's outputSchema (MCP), so it lives in the platform.
import { Type } from 'typebox';
import { Closed, DateTime, Nullable, NullableDateTime, Uuid } from '../contract/schema.ts';

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
