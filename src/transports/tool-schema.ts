// GAPS MCP details: a tool's arguments are the REST parameters flattened into
// one object under their REST names, plus dry_run on write tools.
import { Type, type TObject } from 'typebox';
import type { Operation } from '../platform/operation.ts';
import { serializableSchema } from './schema-refs.ts';

export function toolInputSchema(op: Operation): Record<string, unknown> {
  const parts = [op.params, op.query, op.body].filter((p): p is TObject => p !== undefined);
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const part of parts) {
    Object.assign(properties, part.properties);
    required.push(...((part.required as string[] | undefined) ?? []));
  }
  if (op.dryRunOutput) {
    properties.dry_run = Type.Boolean({ description: 'true: validate and preview the result without writing anything or calling a courier.' });
  }
  const schema: Record<string, unknown> = { type: 'object', properties, additionalProperties: false };
  if (required.length) schema.required = required;
  return serializableSchema(schema as never) as Record<string, unknown>;
}
