// Operator API additions for the console at /admin (docs/operator-console.md):
// what a person needs to find their way (service facts, account and shipment
// lists), and one route that runs any public operation as the merchant's admin,
// so the console reaches every operation of the list, present and future,
// without a key and without a second declaration of it.
import { Type } from 'typebox';
import { Closed, Cursor, Limit, ListOf, Nullable, Uuid } from '../platform/contract/schema.ts';
import { AppError } from '../platform/contract/errors.ts';
import { SCOPES, PRESETS } from '../platform/contract/scopes.ts';
import { noExtras, type Operation } from '../platform/operations/operation.ts';
import { valueOf } from '../platform/read-path/index.ts';
import { etagOfData } from '../platform/contract/etag.ts';
import { execute } from '../platform/operations/execute.ts';
import { compileValidator, type Validator } from '../platform/contract/validation.ts';
import { afterCursor, pageOf, sqlParameters } from '../platform/contract/paging.ts';
import { OPERATOR_SCOPE } from '../platform/contract/cursor-seal.ts';
import { toolArgumentsSchema } from '../transports/tool-schema.ts';
import { SINK_PATH } from '../modules/webhooks/subscriptions/url-policy.ts';
import { MAX_ATTEMPTS } from '../modules/webhooks/delivery/deliveries.ts';
import { requireAccount } from '../modules/storefront/service.ts';
import { listShipments } from '../modules/shipments/queries.ts';
import { listIntegrations } from '../modules/shipments/integrations.ts';
import { Shipment, SHIPMENT_STATUSES } from '../modules/shipments/schema.ts';
import { COURIER_SLUGS } from '../couriers/catalog.ts';
import { JOBS } from '../workers/schedule.ts';
import { Account } from './accounts-routes.ts';
import { adminRoute, FileAnswer, type OperatorServices } from './route.ts';

const Courier = Type.Unsafe<string>({ type: 'string', enum: COURIER_SLUGS });
const OperationSummary = Closed({
  name: Type.String(),
  method: Type.String(),
  path: Type.String({ description: 'The REST path (Fastify style); empty for MCP-only operations.' }),
  rest: Type.Boolean(),
  mcp: Type.Boolean(),
  scope: Nullable('string', { description: 'null: any valid key (the request log, approvals).' }),
  summary: Type.String(),
  dry_run: Type.Boolean(),
});

/** The operator acts as the merchant's admin: every scope, no key, no plan gate. */
const operatorCaller = (accountId: string) => ({
  accountId,
  keyId: 'operator',
  keyPrefix: 'operator',
  scopes: [...SCOPES],
  writes: 'direct' as const,
  source: 'merchant' as const,
});

async function listAccounts(s: OperatorServices, input: { q?: string; limit: number; cursor?: string }) {
  const { values, bind } = sqlParameters();
  const where = ['true'];
  if (input.q) {
    const like = bind(`%${input.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
    where.push(`(name ILIKE ${like} OR email ILIKE ${like} OR id::text = ${bind(input.q.toLowerCase())})`);
  }
  const seal = s.cursors.scopedTo(OPERATOR_SCOPE);
  if (input.cursor) where.push(afterCursor(seal, input.cursor, bind));
  const { rows } = await s.db.query(
    `SELECT id, name, email, plan, active, default_threshold, notification_settings, created_at FROM accounts
      WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT ${bind(input.limit + 1)}`,
    values,
  );
  return pageOf(rows, input.limit, seal, (row: Record<string, any>) => ({ createdAt: row.created_at, id: row.id }));
}

export function consoleRoutes(operations: Operation[]) {
  const byName = new Map(operations.map((op) => [op.name, op]));
  const validators = new Map<string, Validator>();
  const validatorOf = (op: Operation) => {
    if (!validators.has(op.name)) validators.set(op.name, compileValidator(toolArgumentsSchema(op), 'arguments'));
    return validators.get(op.name)!;
  };

  return [
    adminRoute({
      name: 'service_info',
      method: 'GET',
      path: '/info',
      tags: ['Console'],
      summary: 'What this deployment is: database, courier mode, jobs, presets and the public operations',
      description: 'The console reads it once after sign-in. operations lists every operation, so new operations show up without console changes.',
      output: Closed({
        data: Closed({
          public_base_url: Type.String(),
          sink_url: Type.String({
            description: "The debug sink: give it without ?id= as a webhook url, and the service adds the new subscription's id.",
          }),
          database: Type.Unsafe<'postgres' | 'pglite'>({ type: 'string', enum: ['postgres', 'pglite'] }),
          deploy_sha: Type.String(),
          courier_mode: Type.String(),
          couriers: Type.Array(
            Closed({
              slug: Type.String(),
              mode: Nullable('string', { description: 'Simulator mode; null in live mode.' }),
              status_updates: Type.Unsafe<'poll' | 'push'>({
                type: 'string',
                enum: ['poll', 'push'],
                description: 'How the courier reports statuses.',
              }),
              cancel: Type.Boolean({ description: 'Whether the courier has a cancel API.' }),
            }),
          ),
          jobs: Type.Array(Type.String()),
          webhook_attempts: Type.Integer({ description: 'The attempts a webhook delivery gets, its first included, before it is dead.' }),
          scopes: Type.Array(Type.String()),
          presets: Type.Record(Type.String(), Type.Array(Type.String())),
          operations: Type.Array(OperationSummary),
        }),
      }),
      handler: async (s) => ({
        data: {
          public_base_url: s.config.publicBaseUrl,
          sink_url: new URL(SINK_PATH, s.config.publicBaseUrl).toString(),
          database: s.db.kind,
          deploy_sha: s.deploySha,
          courier_mode: s.config.courierMode,
          couriers: await Promise.all(
            COURIER_SLUGS.map(async (slug) => {
              const { statusUpdates, cancel } = s.couriers.adapter(slug).capabilities;
              const mode = s.courierSimulator?.plays(slug) ? await s.courierSimulator.modeOf(slug) : null;
              return { slug, mode, status_updates: statusUpdates, cancel };
            }),
          ),
          jobs: Object.keys(JOBS),
          webhook_attempts: MAX_ATTEMPTS,
          scopes: [...SCOPES],
          presets: PRESETS,
          operations: operations.map((op) => ({
            name: op.name,
            method: op.method,
            path: op.rest === false ? '' : op.path,
            rest: op.rest !== false,
            mcp: op.mcp !== false,
            scope: op.scope,
            summary: op.summary,
            dry_run: op.dryRunOutput !== undefined,
          })),
        },
      }),
    }),
    adminRoute({
      name: 'list_accounts',
      method: 'GET',
      path: '/accounts',
      tags: ['Accounts'],
      summary: 'List accounts, newest first',
      description: 'q matches name or email (substring, any case) or an exact id. Keyset paging like the public lists.',
      query: Closed({ q: Type.Optional(Type.String({ maxLength: 200 })), limit: Limit(50), cursor: Type.Optional(Cursor()) }),
      output: ListOf(Account),
      handler: async (s, input) => listAccounts(s, input as never) as never,
    }),
    adminRoute({
      name: 'list_account_shipments',
      method: 'GET',
      path: '/accounts/:id/shipments',
      tags: ['Console'],
      summary: "List an account's shipments, newest first",
      description: 'Filters: status (normalized), courier. Keyset paging.',
      params: Closed({ id: Uuid() }),
      query: Closed({
        status: Type.Optional(Type.Unsafe<string>({ type: 'string', enum: [...SHIPMENT_STATUSES] })),
        courier: Type.Optional(Courier),
        limit: Limit(50),
        cursor: Type.Optional(Cursor()),
      }),
      output: ListOf(Shipment),
      handler: async (s, { id, ...input }) => {
        await requireAccount(s.db, id);
        return listShipments(s.db, id, input as never, s.cursors) as never;
      },
    }),
    adminRoute({
      name: 'list_courier_integrations',
      method: 'GET',
      path: '/accounts/:id/couriers',
      tags: ['Accounts'],
      summary: "The account's courier integrations, one per registered courier, enabled or not",
      description: 'Credentials are write-only: credentials_set names the keys that are set.',
      params: Closed({ id: Uuid() }),
      output: Closed({
        data: Type.Array(
          Type.Object({ slug: Type.String(), enabled: Type.Boolean(), credentials_set: Type.Array(Type.String()) }, { additionalProperties: true }),
        ),
      }),
      handler: async (s, { id }) => {
        await requireAccount(s.db, id);
        return { data: await listIntegrations(s.db, id, COURIER_SLUGS) };
      },
    }),
    adminRoute({
      name: 'run_operation',
      method: 'POST',
      path: '/accounts/:id/operations/:name',
      tags: ['Console'],
      summary: "Run a public operation as the merchant's admin",
      description:
        "The body is {arguments}: the operation's arguments as its MCP tool takes them (path, query and body fields in one object, dry_run: " +
        "true for a preview), validated the same way. Runs with every scope and no plan check, as the merchant's own admin would; per-account limits " +
        "(webhook test and retry) still apply. The answer is the operation's REST body with status 200, plus `_meta` when the operation answers " +
        "something beside its body (MCP's `_meta`, e.g. next_cursor); a file (the PDF label) comes as the file.",
      params: Closed({ id: Uuid(), name: Type.String({ maxLength: 100 }) }),
      body: Closed({ arguments: Type.Optional(Type.Object({}, { additionalProperties: true })) }),
      output: Type.Object({}, { additionalProperties: true }),
      handler: async (s, { id, name, arguments: args }) => {
        const op = byName.get(name);
        if (!op) throw new AppError('not_found', `no operation ${name}`, { allowed: [...byName.keys()] });
        await requireAccount(s.db, id);
        const input = structuredClone(args ?? {}) as Record<string, unknown>;
        validatorOf(op)(input);
        const { dry_run: dryRun, ...rest } = input;
        const preview = dryRun === true && op.dryRunOutput !== undefined;
        const answer = noExtras();
        const result = await execute(s, op, operatorCaller(id), rest, { dryRun: preview, answer });
        if (op.produces && !preview) {
          const file = result as { body: Buffer; filename: string };
          return new FileAnswer(op.produces, file.filename, file.body);
        }
        // What REST sends as headers and MCP in _meta (the next page's cursor, a versioned resource's ETag) comes in _meta,
        // as MCP has it: the approvals inbox compares the target's ETag with the one the approval was asked under.
        const meta = { ...answer.meta, ...(op.etag && !preview ? { etag: etagOfData(result) } : {}) };
        if (Object.keys(meta).length) return { ...(valueOf(result) as object), _meta: meta };
        return result as never;
      },
    }),
  ];
}
