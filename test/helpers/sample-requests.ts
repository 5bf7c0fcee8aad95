// Issue 41: every request sample of the public reference, sent as a reader
// would send it once the placeholders are filled: the curl sample's method,
// URL, query and body, with `<id>`, `<order_id>`, ... replaced by rows made for
// that one request (a fresh order to confirm, a fresh subscription to delete).
// Used by test/request-samples.test.ts and scripts/response-samples.ts.
import { ADMIN_TOKEN, http, operator, type TestService } from './harness.ts';

export interface SentSample {
  operationId: string;
  method: string;
  /** The path as the document has it: /api/v1/orders/{id}. */
  template: string;
  sent: { url: string; body?: string };
  res: Awaited<ReturnType<typeof http>>;
}

type Operations = Record<string, Record<string, { operationId: string; 'x-codeSamples': Array<{ label: string; source: string }> }>>;

/** The curl sample's parts: method, URL (path and query) and body. */
export function parseCurl(source: string) {
  const [, method, url] = /^curl -X ([A-Z]+) "([^"]+)"/.exec(source)!;
  const body = /-d '((?:[^']|'\\'')*)'/.exec(source)?.[1].replace(/'\\''/g, "'");
  return { method, url, body };
}

export async function sendEverySample(svc: TestService): Promise<SentSample[]> {
  const op = operator(svc.url);
  const account = await op.createAccount({ name: 'Sample Shop' });
  await op.call('PUT', `/accounts/${account.id}/couriers/courier_a`, { enabled: true });
  const info = (await http(svc.url, 'GET', '/admin/api/info', { token: ADMIN_TOKEN })).body.data;
  const key = await op.issueKey(account.id, { scopes: info.scopes });
  const agent = (await op.call('POST', `/accounts/${account.id}/keys`, { name: 'agent', preset: 'fulfilment', writes: 'approval' })).key as string;
  const api = async (method: string, path: string, body?: unknown, token = key) => {
    const res = await http(svc.url, method, path, { token, body });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
    return res.body;
  };
  let made = 0;
  const order = async () => (await op.checkout(account.id)).id as string;
  const product = async () => (await op.createProduct(account.id, { name: 'Enamel mug 350 ml', sku: `MUG-${++made}` })).id as string;
  const shipment = async () => (await api('POST', '/api/v1/shipments', { order_id: await order() })).data.id as string;
  // A finished batch of one order (its labels are ready).
  const batch = async () => {
    const id = (await api('POST', '/api/v1/shipment-batches', { items: [{ order_id: await order() }] })).data.id as string;
    for (let i = 0; i < 400 && !(await api('GET', `/api/v1/shipment-batches/${id}`)).data.finished_at; i++)
      await new Promise((resolve) => setTimeout(resolve, 25));
    return id;
  };
  const segment = async () => (await api('POST', '/api/v1/segments', { name: `Repeat customers ${++made}` })).data.id as string;
  const webhook = async () =>
    (await api('POST', '/api/v1/webhooks', { url: `${svc.service.services.config.publicBaseUrl}/api/webhooks/sink`, events: ['order.created'] })).data
      .id as string;
  // A subscription whose endpoint refuses connections: its deliveries fail, so they can be retried and recovered.
  const failing = async () => {
    const id = (await api('POST', '/api/v1/webhooks', { url: 'https://127.0.0.1:9/hooks/merx', events: ['order.created'] })).data.id as string;
    await order();
    for (let i = 0; i < 100; i++) {
      const deliveries = (await api('GET', `/api/v1/webhooks/${id}/deliveries`)).data;
      if (deliveries[0]) return { id, delivery: deliveries[0].id as string };
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('no delivery was made for the failing subscription');
  };
  const recovery = async () => {
    const { id } = await failing();
    const started = await api('POST', `/api/v1/webhooks/${id}/recover`, { since: new Date(Date.now() - 3_600_000).toISOString() });
    return { id, recovery: started.data.id as string };
  };
  const approval = async () => (await api('PATCH', `/api/v1/orders/${await order()}`, { status: 'confirmed' }, agent)).data.id as string;
  const customerKey = async () => {
    await order();
    return (await api('GET', '/api/v1/customers?limit=1')).data[0].key as string;
  };

  /** The rows one request's placeholders stand for, by the path it goes to. */
  async function fill(template: string, url: string, body: string | undefined) {
    const values: Record<string, string> = {};
    const resource = template.split('/')[3] ?? '';
    if (url.includes('<id>') || url.includes('id=')) {
      // An order's shipment is read of an order that has one.
      if (resource === 'orders' && template.endsWith('/shipment'))
        values.id = (await api('GET', `/api/v1/shipments/${await shipment()}`)).data.order_id;
      else if (resource === 'orders') values.id = await order();
      else if (resource === 'shipments') values.id = await shipment();
      else if (resource === 'shipment-batches') values.id = await batch();
      else if (resource === 'products') values.id = await product();
      else if (resource === 'segments') values.id = await segment();
      else if (resource === 'approvals') values.id = await approval();
      else if (resource === 'webhook-deliveries') values.id = (await failing()).delivery;
      else if (template.includes('{recovery_id}')) Object.assign(values, await recovery().then((r) => ({ id: r.id, recovery_id: r.recovery })));
      else values.id = await webhook();
    }
    if (url.includes('<key>')) values.key = await customerKey();
    if (body?.includes('<order_id>')) values.order_id = await order();
    if (body?.includes('<product_id>')) values.product_id = await product();
    const put = (text: string) =>
      text.replace(/<(\w+)>/g, (whole, name: string) => values[name] ?? whole).replace(/id=0{8}-[0-9a-f-]+/, `id=${values.id}`);
    return { url: put(url), body: body === undefined ? undefined : put(body) };
  }

  const doc = (await http(svc.url, 'GET', '/api/v1/openapi.json')).body as { servers: Array<{ url: string }>; paths: Operations };
  const base = doc.servers[0].url;
  const sent: SentSample[] = [];
  for (const [template, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const curl = parseCurl(operation['x-codeSamples'].find((s) => s.label === 'curl')!.source);
      const filled = await fill(template, curl.url.replace(base, ''), curl.body);
      const res = await http(svc.url, curl.method, filled.url, {
        // The sink needs no key; an approval is read by the key that asked for it.
        token: curl.url.includes('/api/webhooks/sink') ? undefined : template.startsWith('/api/v1/approvals/') ? agent : key,
        rawBody: filled.body,
        headers: filled.body === undefined ? {} : { 'content-type': 'application/json' },
      });
      sent.push({ operationId: operation.operationId, method, template, sent: filled, res });
    }
  }
  return sent;
}
