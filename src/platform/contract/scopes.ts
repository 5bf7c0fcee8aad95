// SPEC Authentication 5 and 6: explicit scopes (":write" never implies ":read") and issue presets.

export const SCOPES = [
  'orders:read',
  'orders:write',
  'shipments:read',
  'shipments:write',
  'inventory:read',
  'inventory:write',
  'products:read',
  'products:write',
  'customers:read',
  'customers:write',
  'webhooks:read',
  'webhooks:write',
  'submit_brief',
  'get_status',
  'get_facts',
] as const;

export type Scope = (typeof SCOPES)[number];

export const PRESETS: Record<'fulfilment' | 'read_only' | 'bridge', Scope[]> = {
  fulfilment: [
    'orders:read',
    'orders:write',
    'shipments:read',
    'shipments:write',
    'inventory:read',
    'inventory:write',
    'products:read',
    'webhooks:read',
    'webhooks:write',
  ],
  read_only: ['orders:read', 'shipments:read', 'inventory:read', 'products:read', 'customers:read', 'webhooks:read'],
  bridge: ['submit_brief', 'get_status', 'get_facts'],
};

export type Preset = keyof typeof PRESETS;

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}
