// SPEC order state table: on `shipped` the customer gets an email and/or SMS
// per the merchant's notification settings.
import type { Sql } from '../../platform/db/db.ts';
import type { OutboundMessage } from '../../notify/notifier.ts';
import type { OrderView } from './schema.ts';

type Notice = Omit<OutboundMessage, 'accountId'>;

interface NotificationSettings {
  email_on_shipped?: boolean;
  sms_on_shipped?: boolean;
}

export async function shippedNotices(sql: Sql, order: OrderView): Promise<Notice[]> {
  const { rows } = await sql.query<{ name: string; notification_settings: NotificationSettings }>(
    'SELECT a.name, a.notification_settings FROM accounts a JOIN orders o ON o.account_id = a.id WHERE o.id = $1',
    [order.id],
  );
  const shop = rows[0];
  if (!shop) return [];
  const ref = order.number ?? order.order_number ?? order.id;
  const tracking = order.tracking_number ? ` Tracking number: ${order.tracking_number}${order.tracking_url ? ` (${order.tracking_url})` : ''}.` : '';
  const notices: Notice[] = [];
  if (shop.notification_settings.email_on_shipped !== false && order.customer.email) {
    notices.push({
      channel: 'email',
      to: order.customer.email,
      subject: `Your order #${ref} from ${shop.name} has shipped`,
      body: `Hello${order.customer.name ? ` ${order.customer.name}` : ''},\n\nyour order #${ref} is on its way.${tracking}\n\n${shop.name}`,
      kind: 'order_shipped',
    });
  }
  if (shop.notification_settings.sms_on_shipped === true && order.customer.phone) {
    notices.push({
      channel: 'sms',
      to: order.customer.phone,
      subject: null,
      body: `${shop.name}: order #${ref} has shipped.${tracking}`,
      kind: 'order_shipped',
    });
  }
  return notices;
}
