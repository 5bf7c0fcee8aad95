// The product operations: declared once, exposed on REST, MCP and OpenAPI.
import { Type } from 'typebox';
import { defineOperation, type Versioned } from '../../platform/operations/operation.ts';
import { Closed } from '../../platform/contract/schema.ts';
import { createProduct, normalizedNewProduct, productChanges, updateProduct } from './commands.ts';
import { getProduct, getProductText, listProducts } from './queries.ts';
import { JsonText, valueOf, storedEtag } from '../../platform/read-path/index.ts';
import { notFound } from '../../platform/contract/errors.ts';
import { productView } from './view.ts';
import {
  type ProductView,
  Changes,
  CreateProductBody,
  ListProductsQuery,
  Product,
  ProductEnvelope,
  ProductIdParams,
  ProductList,
  UpdateProductBody,
} from './schema.ts';

const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true };
const TAGS = ['Products'];

/** EXTENSIONS 3: the product as GET serves it (variants and stock included), for ETag and If-Match. */
const productVersion: Versioned = {
  currentEtag: async (sql, accountId, id, options) => {
    const etag = await storedEtag(sql, productView, accountId, id, options);
    if (etag === null) throw notFound('product');
    return etag;
  },
};

export const listProductsOp = defineOperation({
  name: 'list_products',
  method: 'GET',
  path: '/api/v1/products',
  scope: 'products:read',
  tags: TAGS,
  summary: 'List products with their variants, newest first',
  description: 'Lists catalog products, newest first; status=all includes deactivated ones. stock_quantity null: not tracked.',
  detail:
    'Lists catalog products, newest first, keyset paged. status=active (default) hides deactivated products; status=all shows them. ' +
    'Filter by delivery_type (physical or digital) or an exact sku. stock_quantity null means stock is not tracked.',
  query: ListProductsQuery,
  output: ProductList,
  fields: { id: 'id' },
  annotations: READ,
  handler: (ctx, input) => listProducts(ctx.db, ctx.caller.accountId, input, ctx.cursors),
});

export const getProductOp = defineOperation({
  name: 'get_product',
  method: 'GET',
  path: '/api/v1/products/:id',
  scope: 'products:read',
  tags: TAGS,
  summary: 'Get one product',
  description: 'One product with its variants (deactivated ones too).',
  detail: 'Returns one product with its variants; deactivated products are readable too.',
  params: ProductIdParams,
  output: ProductEnvelope,
  etag: productVersion,
  fields: { id: 'id' },
  annotations: READ,
  handler: async (ctx, { id }) => JsonText.object({ data: await getProductText(ctx.db, ctx.caller.accountId, id) }),
});

export const createProductOp = defineOperation({
  name: 'create_product',
  method: 'POST',
  path: '/api/v1/products',
  scope: 'products:write',
  tags: TAGS,
  summary: 'Create a product',
  description: 'Creates a catalog product; stock changes only through stock movements. Dry run: the record it would create.',
  detail:
    'Creates a catalog product; name and price are required. Stock, cost and images cannot be set here: stock moves only through ' +
    'inventory movements (the first delivery enables tracking). Unknown fields give 400 with details.allowed. ' +
    'Dry run returns the normalized record that would be created.',
  body: CreateProductBody,
  output: ProductEnvelope,
  dryRunOutput: Closed({ dry_run: Type.Literal(true), changes: Changes }),
  successStatus: 201,
  location: '/api/v1/products/:id',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  handler: async (ctx, input) => {
    if (ctx.dryRun) return { dry_run: true as const, changes: normalizedNewProduct(input) };
    return JsonText.object({ data: await ctx.db.tx((tx) => createProduct(tx, ctx.caller.accountId, input)) });
  },
});

export const updateProductOp = defineOperation({
  name: 'update_product',
  method: 'PATCH',
  path: '/api/v1/products/:id',
  scope: 'products:write',
  tags: TAGS,
  summary: 'Change a product',
  description: 'Changes any writable fields of a product; active: false deactivates it. Dry run: the current product and the changes.',
  detail:
    'Changes any subset of the writable fields. active: false deactivates the product; past orders keep it. ' +
    'Dry run returns the current product and the normalized changes.',
  params: ProductIdParams,
  body: UpdateProductBody,
  output: ProductEnvelope,
  dryRunOutput: Closed({ dry_run: Type.Literal(true), data: Product, changes: Changes }),
  etag: productVersion,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  handler: async (ctx, { id, ...input }) => {
    const accountId = ctx.caller.accountId;
    if (ctx.dryRun) {
      const current = await getProductText(ctx.db, accountId, id);
      return JsonText.object({ dry_run: true, data: current, changes: productChanges(valueOf<ProductView>(current), input) });
    }
    return JsonText.object({
      data: await ctx.db.tx(async (tx) => {
        await tx.query('SELECT 1 FROM products WHERE account_id = $1 AND id = $2 FOR UPDATE', [accountId, id]);
        return updateProduct(tx, accountId, id, productChanges(await getProduct(tx, accountId, id), input));
      }),
    });
  },
});

export const productOperations = [listProductsOp, getProductOp, createProductOp, updateProductOp];
