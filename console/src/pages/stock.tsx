// Stock levels and the movement ledger; record a delivery or a correction
// (with a dry-run preview first).
import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { runOperation } from '../api';
import type { StockItem } from '../api-types';
import { Badge, ErrorNote, Field, money, Time } from '../components/ui';
import { Said } from '../components/said';
import { ExportButton } from '../components/export-button';
import { Pager, Table } from '../components/table';
import { Select } from '../components/select';
import { useCursorPages } from '../components/paging';
import { MOVEMENT_TYPES } from '../choices';
import { queryKeys } from '../query-keys';

export function StockTab({ accountId }: { accountId: string }) {
  const [product, setProduct] = useState('');
  const stock = useQuery({
    queryKey: queryKeys.stock(accountId),
    queryFn: () => runOperation(accountId, 'get_inventory_stock'),
  });
  const names = new Map(stock.data?.data.map((item) => [item.product_id, item.name]));
  return (
    <div className="grid two wide-left">
      <div className="stack">
        <ErrorNote error={stock.error} />
        {stock.data && (
          <p className="muted">
            Active physical products. Default low-stock threshold: {stock.data.default_threshold}. Select a product to filter its movements.
          </p>
        )}
        <Table
          label="Stock"
          empty="No active physical products."
          rows={stock.data?.data}
          rowKey={(i) => i.product_id}
          selected={product}
          onOpen={(i) => setProduct(product === i.product_id ? '' : i.product_id)}
          columns={[
            { header: 'Product', cell: (i) => <strong>{i.name}</strong> },
            { header: 'SKU', cell: (i) => i.sku ?? '—' },
            { header: 'In stock', cell: (i) => (i.tracked ? i.stock_quantity : <span className="muted">not tracked</span>), className: 'num' },
            { header: 'Threshold', cell: (i) => i.effective_threshold, className: 'num' },
            { header: '', cell: (i) => (i.low ? <Badge value="low" /> : null) },
            {
              header: 'Variants',
              cell: (i) => (
                <span className="muted">{i.variants.map((v) => `${v.value ?? v.name}: ${v.tracked ? v.stock_quantity : '—'}`).join(' · ')}</span>
              ),
            },
          ]}
        />
        <Movements accountId={accountId} productId={product} names={names} />
      </div>
      <RecordMovement accountId={accountId} products={stock.data?.data ?? []} selected={product} />
    </div>
  );
}

function Movements({ accountId, productId, names }: { accountId: string; productId: string; names: Map<string, string> }) {
  const [type, setType] = useState('');
  const pages = useCursorPages(`${productId}|${type}`);
  const list = useQuery({
    queryKey: queryKeys.movementsPage(accountId, productId, type, pages.cursor),
    queryFn: () => runOperation(accountId, 'list_stock_movements', { product_id: productId, type, cursor: pages.cursor, limit: 25 }),
    placeholderData: (previous) => previous,
  });
  return (
    <section className="stack" aria-label="Movements">
      <header className="row spread">
        <h3>Movements {productId && <span className="muted">of {names.get(productId)}</span>}</h3>
        <Select label="Type" value={type} options={MOVEMENT_TYPES} onChange={setType} />
        <ExportButton accountId={accountId} operation="export_stock_movements" filters={{ product_id: productId, type }} name="stock-movements" />
      </header>
      <ErrorNote error={list.error} />
      <Table
        label="Movements"
        empty="No movements."
        rows={list.data?.data}
        rowKey={(m) => m.id}
        columns={[
          { header: 'When', cell: (m) => <Time at={m.created_at} /> },
          { header: 'Product', cell: (m) => names.get(m.product_id) ?? <code className="id">{m.product_id}</code> },
          { header: 'Type', cell: (m) => <Badge value={m.type} /> },
          { header: 'Qty', cell: (m) => (m.qty > 0 ? `+${m.qty}` : m.qty), className: 'num' },
          { header: 'Note', cell: (m) => <span className="muted">{m.note ?? (m.order_id ? 'order' : '')}</span> },
        ]}
      />
      <Pager pages={pages} list={list.data} />
    </section>
  );
}

/**
 * record_stock_movement's answer (or its dry run) in a sentence, with the
 * product's stock before and after (issue 41: the console showed the JSON).
 */
function movementWords({ answer, product, type }: { answer: object; product: StockItem | undefined; type: string }, dryRun: boolean): string {
  const a = answer as {
    type?: string;
    qty?: number;
    applied?: number;
    new_cost?: number | null;
    enables_tracking?: boolean;
    unit_cost?: number | null;
  };
  const name = product?.name ?? 'the product';
  const qty = (dryRun ? a.qty : a.applied) ?? 0;
  const was = product?.tracked ? (product.stock_quantity ?? 0) : null;
  const after = was === null ? qty : was + qty;
  const counted = qty > 0 ? `+${qty}` : String(qty);
  if (dryRun) {
    const kind = type === 'delivery' ? `a delivery of ${qty}` : `a correction of ${counted}`;
    const change = was === null ? `${name} starts being tracked with ${after} in stock` : `${name} goes from ${was} to ${after} in stock`;
    return `Preview: ${kind}${a.unit_cost != null ? ` at ${money(a.unit_cost)} each` : ''}; ${change}. Nothing was recorded.`;
  }
  const stock = was === null ? `${name} is tracked now, ${after} in stock` : `${name}: ${was} → ${after} in stock`;
  return `Recorded ${type === 'delivery' ? 'a delivery' : 'a correction'} of ${counted}. ${stock}${a.new_cost != null ? `, average cost ${money(a.new_cost)}` : ''}.`;
}

function RecordMovement({ accountId, products, selected }: { accountId: string; products: StockItem[]; selected: string }) {
  const queries = useQueryClient();
  const [form, setForm] = useState({ product_id: '', type: 'delivery', qty: '10', unit_cost: '', note: '' });
  const productId = form.product_id || selected || products[0]?.product_id || '';
  const record = useMutation({
    // The product as it was when asked, so the sentence can say before and after.
    mutationFn: async (dryRun: boolean) => ({
      product: products.find((p) => p.product_id === productId),
      type: form.type,
      answer: await runOperation(accountId, 'record_stock_movement', {
        product_id: productId,
        type: form.type,
        qty: Number(form.qty),
        unit_cost: form.type === 'delivery' && form.unit_cost ? Number(form.unit_cost) : undefined,
        note: form.note,
        dry_run: dryRun || undefined,
      }),
    }),
    onSuccess: (_r, dryRun) => {
      if (dryRun) return;
      void queries.invalidateQueries({ queryKey: queryKeys.stock(accountId) });
      void queries.invalidateQueries({ queryKey: queryKeys.movements(accountId) });
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    record.mutate(false);
  };
  return (
    <form className="card stack" onSubmit={submit} aria-label="Record a movement">
      <h2>Record a movement</h2>
      <Field label="Product">
        <select value={productId} onChange={(e) => setForm({ ...form, product_id: e.target.value })}>
          {products.map((p) => (
            <option key={p.product_id} value={p.product_id}>
              {p.name}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Type" hint="delivery adds stock (and may set the average cost); correction is signed.">
        <select value={form.type} onChange={(e) => setForm({ ...form, type: e.target.value })}>
          <option value="delivery">delivery</option>
          <option value="correction">correction</option>
        </select>
      </Field>
      <Field label="Quantity">
        <input type="number" required value={form.qty} onChange={(e) => setForm({ ...form, qty: e.target.value })} />
      </Field>
      {form.type === 'delivery' && (
        <Field label="Unit cost (optional)">
          <input type="number" min={0} step="0.01" value={form.unit_cost} onChange={(e) => setForm({ ...form, unit_cost: e.target.value })} />
        </Field>
      )}
      <Field label="Note">
        <input value={form.note} onChange={(e) => setForm({ ...form, note: e.target.value })} />
      </Field>
      <div className="row">
        <button type="button" className="secondary" disabled={!productId || record.isPending} onClick={() => record.mutate(true)}>
          Preview
        </button>
        <button type="submit" disabled={!productId || record.isPending}>
          Record
        </button>
      </div>
      {record.data && record.variables !== undefined && (
        <Said tone={record.variables ? 'preview' : 'ok'}>{movementWords(record.data, record.variables)}</Said>
      )}
      <ErrorNote error={record.error} />
    </form>
  );
}
