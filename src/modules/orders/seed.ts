// Bulk synthetic orders for the operator's seed (operator/seed.ts): one
// set-based INSERT ... SELECT over generate_series, so 100k orders load in
// seconds; deterministic under the caller's setseed(). Each order sells one
// of the account's products, on a page selling it when there is one. No
// events: a data loader, not a checkout; the caller rebuilds the customers.
import type { Sql } from '../../platform/db/db.ts';

const FIRST = [
  'Ana',
  'Boris',
  'Daria',
  'Emil',
  'Galya',
  'Ivan',
  'Kalina',
  'Lyubo',
  'Maria',
  'Nikola',
  'Petya',
  'Rosen',
  'Stela',
  'Todor',
  'Vera',
  'Yana',
];
const LAST = ['Petrova', 'Ivanov', 'Georgieva', 'Dimitrov', 'Koleva', 'Nikolov', 'Stoyanova', 'Todorov', 'Marinova', 'Angelov'];
const CITIES = ['Sofia', 'Plovdiv', 'Varna', 'Burgas', 'Ruse', 'Stara Zagora', 'Pleven', 'Sliven'];

const sqlArray = (values: readonly string[]) => `ARRAY[${values.map((v) => `'${v.replace(/'/g, "''")}'`).join(',')}]`;

/** `count` orders numbered from `firstNumber` (reserved by the caller), spread over `customers` customers. */
export async function seedOrders(
  tx: Sql,
  accountId: string,
  input: { count: number; customers: number; firstNumber: number; courierSlugs: readonly string[] },
): Promise<void> {
  await tx.query(
    `WITH catalog AS (
       SELECT array_agg(p.id ORDER BY p.id) AS ids, array_agg(p.name ORDER BY p.id) AS names, array_agg(p.sku ORDER BY p.id) AS skus,
              array_agg(p.price ORDER BY p.id) AS prices, array_agg(p.delivery_type ORDER BY p.id) AS types,
              array_agg(pg.id ORDER BY p.id) AS page_ids
         FROM products p
         LEFT JOIN LATERAL (SELECT id FROM pages WHERE account_id = $1 AND product_ids @> ARRAY[p.id] LIMIT 1) pg ON true
        WHERE p.account_id = $1
     ), draws AS (
       SELECT g, 1 + floor(random() * cardinality(c.ids))::int AS pi, 1 + floor(random() * 3)::int AS qty,
              floor(random() * 100)::int AS roll, floor(random() * 100)::int AS pay, (g * 7919) % $3::int AS cust,
              now() - make_interval(secs => random() * 365 * 86400) AS at, c.*
         FROM generate_series(1, $2::int) g, catalog c
     )
     INSERT INTO orders (id, account_id, number, order_number, status, payment_status, payment_method, funnel_step,
       total, delivery_price, discount_amount, customer_name, customer_email, customer_phone,
       shipping_address, shipping_city, shipping_zip, shipping_method, courier_slug, courier_delivery_mode, courier_office_id,
       courier, tracking_number, tracking_url, line_items, page_id, attribution, ip_address, payment_provider_id, cost_total,
       created_at, updated_at)
     SELECT gen_random_uuid(), $1, $4::int + g - 1, nextval('order_number_seq'), st.status,
            CASE WHEN pay < 40 OR st.status IN ('delivered') THEN 'paid' WHEN st.status = 'refunded' THEN 'refunded' ELSE 'pending' END,
            CASE WHEN pay < 40 THEN 'card' WHEN pay < 50 THEN 'bank' ELSE 'cod' END, 'main',
            round((prices[pi] * qty + 5.99)::numeric, 2), 5.99, NULL,
            (${sqlArray(FIRST)})[1 + cust % ${FIRST.length}] || ' ' || (${sqlArray(LAST)})[1 + (cust / ${FIRST.length}) % ${LAST.length}],
            'customer' || cust || '@example.com', '+3598' || lpad(cust::text, 8, '0'),
            'ul. Vitosha ' || (1 + cust % 200), (${sqlArray(CITIES)})[1 + cust % ${CITIES.length}], lpad((1000 + cust % 8000)::text, 4, '0'),
            'courier', (${sqlArray(input.courierSlugs)})[1 + g % ${input.courierSlugs.length}], CASE WHEN g % 2 = 0 THEN 'office' ELSE 'home' END,
            CASE WHEN g % 2 = 0 THEN to_jsonb(100 + g % 50) ELSE NULL END,
            CASE WHEN st.shipped THEN (${sqlArray(input.courierSlugs)})[1 + g % ${input.courierSlugs.length}] END,
            CASE WHEN st.shipped THEN 'TRK' || lpad(g::text, 10, '0') END,
            CASE WHEN st.shipped THEN 'https://track.example.com/TRK' || lpad(g::text, 10, '0') END,
            jsonb_build_array(jsonb_build_object('kind', 'main', 'product_id', ids[pi], 'variant_id', NULL, 'name', names[pi], 'sku', skus[pi],
              'qty', qty, 'unit_price_cents', round(prices[pi] * 100)::int, 'total_cents', round(prices[pi] * 100)::int * qty,
              'delivery_type', types[pi], 'digital', types[pi] = 'digital', 'note', '')),
            page_ids[pi], jsonb_build_object('utm_source', 'seed'), '203.0.113.' || (g % 250), 'pi_seed_' || g,
            round((prices[pi] * qty * 0.4)::numeric, 2), at, at + make_interval(secs => roll * 60)
       FROM draws
       CROSS JOIN LATERAL (SELECT CASE
            WHEN roll < 20 THEN 'new' WHEN roll < 30 THEN 'confirmed' WHEN roll < 40 THEN 'processing'
            WHEN roll < 65 THEN 'shipped' WHEN roll < 90 THEN 'delivered' WHEN roll < 95 THEN 'cancelled'
            WHEN roll < 97 THEN 'returned' WHEN roll < 98 THEN 'refunded' ELSE 'archived' END AS status) s0
       CROSS JOIN LATERAL (SELECT s0.status, s0.status IN ('shipped', 'delivered', 'returned') AS shipped) st`,
    [accountId, input.count, input.customers, input.firstNumber],
  );
}

/**
 * Issue 41 item 7: the bulk seed's shipped, delivered and returned orders carry a tracking number but no waybill; for
 * the demo account they go back to processing, so that the demo ships them for real (operator/demo-truth.ts).
 */
export async function unshipSeededOrders(sql: Sql, accountId: string): Promise<void> {
  await sql.query(
    `UPDATE orders SET status = 'processing', courier = NULL, tracking_number = NULL, tracking_url = NULL
      WHERE account_id = $1 AND status IN ('shipped', 'delivered', 'returned')
        AND NOT EXISTS (SELECT 1 FROM shipments s WHERE s.account_id = orders.account_id AND s.order_id = orders.id)`,
    [accountId],
  );
}
