// What a delivery looks like to the receiver, for the OpenAPI document's
// `webhooks` section (EXTENSIONS 4: the webhook-* headers are described there).
import { Envelope } from '../../events/schema.ts';

const text = (description: string, schema: object = { type: 'string' }) => ({ description, schema });
const optional = (doc: { description: string; schema: object }) => ({ ...doc, required: false });

/** Shaped as the OpenAPI builder's DescribedWebhook (checked where app.ts passes it); a room imports no transport. */
export const deliveryWebhooks = {
  event: {
    summary: 'A signed event delivery to a subscription URL',
    description:
      'One POST per event and subscription, at least once (deduplicate by the envelope id, which is also webhook-id). Verify on the raw body ' +
      'before parsing, with either scheme: X-Merx-Signature is Stripe-style (t=<t>,v1=<hex HMAC-SHA256 of "<t>.<raw body>"> keyed with the ' +
      "secret as UTF-8 text; Stripe's verifier accepts it), webhook-* are Standard Webhooks (the standardwebhooks and Svix libraries accept " +
      'them with the secret written whsec_ + base64 of its UTF-8 bytes). During a secret rotation both secrets sign: two v1 values in ' +
      'X-Merx-Signature (new first) and two space-separated webhook-signature entries, until previous_secret_expires_at. Reject a timestamp ' +
      'more than 300 s from your clock. POST /api/v1/webhooks/{id}/verify-signature says why a verification fails.',
    headers: {
      'Content-Type': text('application/json'),
      'User-Agent': text('merx-webhooks/1'),
      'X-Merx-Event': text('The event name.'),
      'X-Merx-Event-Id': text('The envelope id (the same on every retry).', { type: 'string', format: 'uuid' }),
      'X-Merx-Delivery': text('The id of this attempt (different on every retry).', { type: 'string', format: 'uuid' }),
      'X-Merx-Timestamp': text('Unix seconds when this attempt was signed.', { type: 'string', pattern: '^\\d+$' }),
      'X-Merx-Signature': text('t=<timestamp>,v1=<hex>[,v1=<hex of the previous secret during a rotation>].'),
      'X-Merx-Resource-Version': optional(
        text(
          'order.* and shipment.* only (EXTENSIONS 6): the version of the order (order.*) or shipment (shipment.*) when the event committed, ' +
            'greater for every later change of it. Keep the highest version applied per resource id and ignore lower ones, whatever order ' +
            'deliveries arrive in. inventory.low_stock and test deliveries carry none.',
          { type: 'string', pattern: '^\\d+$' },
        ),
      ),
      'webhook-id': text('Standard Webhooks message id: the envelope id.', { type: 'string', format: 'uuid' }),
      'webhook-timestamp': text('The same Unix seconds as X-Merx-Timestamp.', { type: 'string', pattern: '^\\d+$' }),
      'webhook-signature': text('v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<raw body>">, space-separated when two secrets sign.'),
    },
    body: Envelope,
  },
};
