// EXTENSIONS 8: a batch's labels as one PDF. Each label is the single label
// route's own answer (get_shipment_label: the courier's PDF, fetched now);
// pdf-lib copies their pages, unchanged, into one document in item order.
import { PDFDocument } from 'pdf-lib';
import { AppError } from '../../platform/contract/errors.ts';
import type { OperationContext } from '../../platform/operations/operation.ts';
import { getBatch, succeededShipments } from './batch-store.ts';
import { getLabelOp } from './operations.ts';

/** Labels fetched from the couriers at once (their order in the file is the items' order whatever the arrival). */
const FETCHES_IN_FLIGHT = 8;

export async function batchLabels(ctx: OperationContext, batchId: string): Promise<Buffer> {
  const batch = await getBatch(ctx.db, ctx.caller.accountId, batchId);
  if (batch.pending > 0) {
    throw new AppError('conflict', `the batch still has ${batch.pending} pending item(s); its labels are ready when it finishes`, {
      reason: 'batch_running',
    });
  }
  const shipments = await succeededShipments(ctx.db, batchId);
  if (!shipments.length) throw new AppError('conflict', 'no item of the batch succeeded, so it has no labels', { reason: 'no_labels' });
  const labels: Buffer[] = new Array(shipments.length);
  let next = 0;
  const fetcher = async () => {
    for (let i = next++; i < shipments.length; i = next++) {
      labels[i] = ((await getLabelOp.handler(ctx, { id: shipments[i] })) as { body: Buffer }).body;
    }
  };
  await Promise.all(Array.from({ length: Math.min(FETCHES_IN_FLIGHT, shipments.length) }, fetcher));
  return mergePdfs(labels);
}

/** One PDF of every page of `documents`, in order, each page copied as it is. */
export async function mergePdfs(documents: Buffer[]): Promise<Buffer> {
  const merged = await PDFDocument.create();
  for (const bytes of documents) {
    const source = await PDFDocument.load(bytes);
    for (const page of await merged.copyPages(source, source.getPageIndices())) merged.addPage(page);
  }
  return Buffer.from(await merged.save());
}
