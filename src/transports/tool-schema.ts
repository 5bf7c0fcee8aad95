// GAPS MCP details: a tool's arguments are the REST parameters flattened into
// one object under their REST names, plus dry_run on write tools. Issue 41: a
// write tool also takes approval_id, idempotency_key and (on a versioned
// resource) if_match as arguments, the _meta fields of the same names that a
// model cannot set (mcp-results.ts controlOf reads either).
import { Type, type TObject } from 'typebox';
import { admittingScopes, isWrite, type Operation } from '../platform/operations/operation.ts';
import { ApprovalAnswerBody } from '../platform/operations/agents-hook.ts';
import { serializableSchema } from './schema-refs.ts';
import { portableSchema } from './portable-schema.ts';
import { compactSchema } from './compact-schema.ts';
import { withoutRequired } from '../platform/contract/fields.ts';

/**
 * The arguments as validated: the REST parts merged, in the spelling the validators share with REST.
 * `controls`: with the MCP write tool's approval_id, idempotency_key and if_match (the console's runner has none).
 */
export function toolArgumentsSchema(op: Operation, options: { controls?: boolean } = {}): Record<string, unknown> {
  const parts = [op.params, op.query, op.body].filter((p): p is TObject => p !== undefined);
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const part of parts) {
    Object.assign(properties, part.properties);
    required.push(...((part.required as string[] | undefined) ?? []));
  }
  if (op.dryRunOutput) {
    // What a dry run previews is in the tool's description; the name says the rest (EXTENSIONS 10, token budgets).
    properties.dry_run = Type.Boolean();
  }
  if (options.controls && isWrite(op)) Object.assign(properties, CONTROL_ARGUMENTS, op.etag ? { if_match: IF_MATCH } : {});
  const schema: Record<string, unknown> = { type: 'object', properties, additionalProperties: false };
  if (required.length) schema.required = required;
  return serializableSchema(schema) as Record<string, unknown>;
}

/**
 * Every write tool carries them in tools/list, so their names say what they
 * are and the server's instructions (mcp-instructions.ts) say once how to use
 * them (EXTENSIONS 10, token budgets).
 */
const CONTROL_ARGUMENTS = {
  approval_id: Type.String(),
  idempotency_key: Type.String(),
};
const IF_MATCH = Type.String({ description: 'ETag from _meta.etag.' });

/** Arguments many tools share, explained once in the server's instructions (mcp-instructions.ts) rather than in each tool. */
const EXPLAINED_ONCE = ['cursor', 'fields'];

/** The inputSchema tools/list shows: the same arguments, in portable JSON Schema, compact (EXTENSIONS 10). */
export function toolInputSchema(op: Operation): Record<string, unknown> {
  const schema = compactSchema(portableSchema(toolArgumentsSchema(op, { controls: true })), { creates: op.method === 'POST' }) as Record<
    string,
    unknown
  >;
  const properties = schema.properties as Record<string, Record<string, unknown>>;
  for (const name of EXPLAINED_ONCE) {
    if (properties[name]) {
      const { description: _said, ...rest } = properties[name];
      properties[name] = rest;
    }
  }
  return schema;
}

/** What tools/list says of the tool: the operation's description and, in plain words, the scope it needs (EXTENSIONS 10). */
export function toolDescription(op: Operation): string {
  const scopes = admittingScopes(op);
  if (!scopes.length) return `${op.description} Any key may call it.`;
  return `${op.description} Scope: ${scopes.length > 1 ? `any of ${scopes.join(', ')}` : scopes[0]}.`;
}

/** The inverse: a tool's flattened arguments split back into the REST request's path, query and body. */
export function argumentParts(op: Operation, args: Record<string, unknown>) {
  const pick = (part: TObject | undefined) => Object.fromEntries(Object.entries(args).filter(([name]) => part?.properties[name] !== undefined));
  return { params: pick(op.params), query: pick(op.query), body: pick(op.body) };
}

/** What a refusal's structuredContent looks like (SPEC Errors, MCP). */
const REFUSAL = {
  type: 'object',
  properties: { error: { type: 'string', description: 'SCOPE, PLAN, or the REST error code upper-cased.' }, reason: { type: 'string' } },
  required: ['error', 'reason'],
  additionalProperties: false,
};

/**
 * The tool's outputSchema: its result, its dry-run preview, or a refusal. GAPS
 * MCP details: the official client validates structuredContent against it
 * even when isError is true, so the refusal shape must be admitted.
 */
export function toolOutputSchema(op: Operation): Record<string, unknown> {
  // EXTENSIONS 7: a write by a key whose writes wait for a person answers the approval instead.
  const shapes = [op.output, op.dryRunOutput, isWrite(op) ? ApprovalAnswerBody : undefined]
    .filter(Boolean)
    .map((s) => serializableSchema(s as never));
  // EXTENSIONS 10: an answer projected by `fields` has the same shapes without their required lists.
  if (op.fields) shapes.push(withoutRequired(shapes[0]) as object);
  return portableSchema({ type: 'object', anyOf: [...shapes, REFUSAL] }) as Record<string, unknown>;
}
