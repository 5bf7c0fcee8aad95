// Operator API, EXTENSIONS 10: an account's connected apps (its live OAuth
// grants) and their revocation. The console's "Connected apps" stands on these.
import { Type } from 'typebox';
import { Closed, DateTime, NullableDateTime, Nullable, Uuid } from '../platform/contract/schema.ts';
import { notFound } from '../platform/contract/errors.ts';
import { getAccount } from '../modules/accounts/service.ts';
import { grantAccount, listGrants, revokeGrant } from '../modules/oauth/grants.ts';
import { adminRoute } from './route.ts';

const TAGS = ['Connected apps'];
const Id = Closed({ id: Uuid() });

const ConnectedApp = Closed(
  {
    id: Uuid({ description: 'The grant.' }),
    client_id: Type.String({ description: 'The OAuth client: a registered id, or the URL of its metadata document.' }),
    client_name: Type.String({ description: "The client's name, else its redirect host." }),
    redirect_uri: Type.String(),
    key_prefix: Type.String({ description: "The grant's prefix: its requests appear under it in the request log." }),
    scopes: Type.Array(Type.String()),
    writes: Type.Unsafe<'direct' | 'approval'>({
      type: 'string',
      enum: ['direct', 'approval'],
      description: "approval: the app's writes wait for a person (EXTENSIONS 7).",
    }),
    created_at: DateTime(),
    last_used_at: NullableDateTime(),
  },
  { $id: 'ConnectedApp' },
);

export const connectedAppsRoutes = [
  adminRoute({
    name: 'list_connected_apps',
    method: 'GET',
    path: '/accounts/:id/connected-apps',
    tags: TAGS,
    summary: "An account's connected apps (live OAuth grants), newest first",
    description: 'Apps a person connected through /oauth/authorize (claude.ai, ChatGPT, ...): client, scopes, approval mode, created and last used.',
    params: Id,
    output: Closed({ data: Type.Array(ConnectedApp) }),
    handler: async (s, { id }) => {
      await getAccount(s.db, id);
      return { data: await listGrants(s.db, id) };
    },
  }),
  adminRoute({
    name: 'revoke_connected_app',
    method: 'POST',
    path: '/connected-apps/:id/revoke',
    tags: TAGS,
    summary: 'Revoke a connected app at once',
    description:
      'Ends the grant and every access and refresh token of it; every instance refuses them before this answers. Revoking again answers 200.',
    params: Id,
    output: Closed({ data: Closed({ id: Uuid(), revoked: Type.Literal(true), account_id: Nullable('string') }) }),
    handler: async (s, { id }) => {
      const accountId = await grantAccount(s.db, id);
      if (!accountId) throw notFound('connected app');
      await revokeGrant(s.db, s.keys, id);
      return { data: { id, revoked: true as const, account_id: accountId } };
    },
  }),
];
