// Operator API: accounts and keys, and the fault switch (OPERATOR_API.md).
import { Type } from 'typebox';
import { Closed, DateTime, NullableDateTime, Uuid } from '../platform/contract/schema.ts';
import { PRESETS, SCOPES, type Scope } from '../platform/contract/scopes.ts';
import { AppError } from '../platform/contract/errors.ts';
import { createAccount, getAccount, issueKey, listKeys, revokeKey, updateAccount } from '../modules/accounts/service.ts';
import { adminRoute } from './route.ts';

const Plan = Type.Unsafe<'free' | 'pro' | 'business'>({ type: 'string', enum: ['free', 'pro', 'business'] });
const NotificationSettings = Closed({ email_on_shipped: Type.Optional(Type.Boolean()), sms_on_shipped: Type.Optional(Type.Boolean()) });

export const Account = Closed(
  {
    id: Uuid(),
    name: Type.String(),
    email: Type.String(),
    plan: Plan,
    active: Type.Boolean(),
    default_threshold: Type.Integer(),
    notification_settings: Closed({ email_on_shipped: Type.Boolean(), sms_on_shipped: Type.Boolean() }),
    created_at: DateTime(),
  },
  { $id: 'Account' },
);

const Writes = Type.Unsafe<'direct' | 'approval'>({
  type: 'string',
  enum: ['direct', 'approval'],
  description: 'EXTENSIONS 7: approval makes every write of the key (not a dry run) wait for a person: it answers 202 with an approval instead.',
});

const Key = Closed(
  {
    id: Uuid(),
    name: Type.String(),
    prefix: Type.String({ description: 'The first 11 characters of the key.' }),
    scopes: Type.Array(Type.String()),
    writes: Writes,
    created_at: DateTime(),
    last_used_at: NullableDateTime(),
    revoked_at: NullableDateTime(),
    expires_at: NullableDateTime({ description: 'Past this instant the key answers 401 saying it expired; null: it never expires.' }),
  },
  { $id: 'Key' },
);

const AccountId = Closed({ id: Uuid() });
const AccountFields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  email: Type.String({ minLength: 3, maxLength: 320 }),
  plan: Plan,
  default_threshold: Type.Integer({ minimum: 0 }),
  notification_settings: NotificationSettings,
};

export const accountRoutes = [
  adminRoute({
    name: 'create_account',
    method: 'POST',
    path: '/accounts',
    tags: ['Accounts'],
    summary: 'Create a merchant account',
    description: 'Plan defaults to pro; notification settings default to email on shipped, no SMS.',
    body: Closed({
      name: AccountFields.name,
      email: AccountFields.email,
      plan: Type.Optional(AccountFields.plan),
      default_threshold: Type.Optional(AccountFields.default_threshold),
      notification_settings: Type.Optional(AccountFields.notification_settings),
    }),
    output: Closed({ data: Account }),
    successStatus: 201,
    handler: async (s, input) => ({ data: await s.db.tx((tx) => createAccount(tx, input)) }),
  }),
  adminRoute({
    name: 'get_account',
    method: 'GET',
    path: '/accounts/:id',
    tags: ['Accounts'],
    summary: 'Get an account',
    description: '',
    params: AccountId,
    output: Closed({ data: Account }),
    handler: async (s, input) => ({ data: await getAccount(s.db, input.id) }),
  }),
  adminRoute({
    name: 'update_account',
    method: 'PATCH',
    path: '/accounts/:id',
    tags: ['Accounts'],
    summary: 'Change an account',
    description: 'active: false deactivates the account: its keys answer 401 at once.',
    params: AccountId,
    body: Closed({
      name: Type.Optional(AccountFields.name),
      email: Type.Optional(AccountFields.email),
      plan: Type.Optional(AccountFields.plan),
      active: Type.Optional(Type.Boolean()),
      default_threshold: Type.Optional(AccountFields.default_threshold),
      notification_settings: Type.Optional(AccountFields.notification_settings),
    }),
    output: Closed({ data: Account }),
    // A plan or active change reaches every instance's key cache before the answer (issue 12).
    handler: async (s, { id, ...input }) => ({ data: await s.keys.announced(`account:${id}`, () => s.db.tx((tx) => updateAccount(tx, id, input))) }),
  }),
  adminRoute({
    name: 'issue_key',
    method: 'POST',
    path: '/accounts/:id/keys',
    tags: ['Keys'],
    summary: 'Issue an API key',
    description:
      'Give a preset (fulfilment, read_only, bridge) or explicit scopes. The full key is in the answer once; an 11th active key is a 409. ' +
      'writes: "approval" (default "direct") issues a key for an agent whose writes wait for a person (EXTENSIONS 7).',
    params: AccountId,
    body: Closed({
      name: Type.String({ minLength: 1, maxLength: 200 }),
      preset: Type.Optional(Type.Unsafe<keyof typeof PRESETS>({ type: 'string', enum: Object.keys(PRESETS) })),
      scopes: Type.Optional(Type.Array(Type.Unsafe<Scope>({ type: 'string', enum: [...SCOPES] }), { minItems: 1 })),
      writes: Type.Optional(Writes),
      expires_at: Type.Optional(DateTime({ description: 'When the key stops working (a date-time in the future); omitted: never.' })),
    }),
    output: Closed({ data: Key, key: Type.String({ description: 'The full key, shown only here.' }) }),
    successStatus: 201,
    handler: async (s, { id, name, preset, scopes, writes, expires_at }) => {
      if ((preset === undefined) === (scopes === undefined)) {
        throw new AppError('validation_failed', 'give either preset or scopes (there is no default preset)');
      }
      return s.db.tx((tx) => issueKey(tx, id, name, preset ? PRESETS[preset] : scopes!, writes ?? 'direct', expires_at ?? null));
    },
  }),
  adminRoute({
    name: 'list_keys',
    method: 'GET',
    path: '/accounts/:id/keys',
    tags: ['Keys'],
    summary: "List an account's keys",
    description: 'Prefix, scopes and last use; never the key.',
    params: AccountId,
    output: Closed({ data: Type.Array(Key) }),
    handler: async (s, input) => ({ data: await listKeys(s.db, input.id) }),
  }),
  adminRoute({
    name: 'revoke_key',
    method: 'DELETE',
    path: '/keys/:id',
    tags: ['Keys'],
    summary: 'Revoke a key at once',
    description: '',
    params: AccountId,
    output: Closed({ data: Key }),
    // SPEC Authentication 4: every instance has forgotten the key before the answer (issue 12).
    handler: async (s, input) => ({ data: await s.keys.announced(`key:${input.id}`, () => s.db.tx((tx) => revokeKey(tx, input.id))) }),
  }),
  adminRoute({
    name: 'set_faults',
    method: 'PUT',
    path: '/faults',
    tags: ['Outside world'],
    summary: 'Force failures of outside dependencies',
    description:
      'plan_lookup: fail makes every plan check answer 403 plan_lookup_failed. shipment_commit: fail_next makes the next shipment ' +
      'creation fail after the courier accepted the waybill (an addition, to test the undo). webhook_metered_start: late_next makes the ' +
      'attempts of the next claim under a webhook rate begin half a second after their turn (an addition, to test that they wait for another). ' +
      'Not available in production (404).',
    body: Closed({
      plan_lookup: Type.Optional(Type.Unsafe<'ok' | 'fail'>({ type: 'string', enum: ['ok', 'fail'] })),
      shipment_commit: Type.Optional(Type.Unsafe<'ok' | 'fail_next'>({ type: 'string', enum: ['ok', 'fail_next'] })),
      webhook_metered_start: Type.Optional(Type.Unsafe<'ok' | 'late_next'>({ type: 'string', enum: ['ok', 'late_next'] })),
    }),
    output: Closed({ data: Closed({ plan_lookup: Type.String(), shipment_commit: Type.String(), webhook_metered_start: Type.String() }) }),
    handler: async (s, input) => {
      if (s.config.production || !s.faults) throw new AppError('not_found', 'route not found');
      const faults = s.faults;
      if (input.plan_lookup) faults.lookupFails = input.plan_lookup === 'fail';
      if (input.shipment_commit) faults.failNextShipmentCommit = input.shipment_commit === 'fail_next';
      if (input.webhook_metered_start) faults.lateNextMeteredStart = input.webhook_metered_start === 'late_next';
      return {
        data: {
          plan_lookup: faults.lookupFails ? 'fail' : 'ok',
          shipment_commit: faults.failNextShipmentCommit ? 'fail_next' : 'ok',
          webhook_metered_start: faults.lateNextMeteredStart ? 'late_next' : 'ok',
        },
      };
    },
  }),
];
