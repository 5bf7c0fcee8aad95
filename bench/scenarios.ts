// The measured requests: each as an HTTP path for autocannon and as the call
// the route makes for the raw side, with identical inputs.
import type { Db } from '../src/platform/db/db.ts';
import { getOrder, listOrders } from '../src/modules/orders/queries.ts';
import type { ListOrdersInput } from '../src/modules/orders/schema.ts';
import type { BenchParams } from './fixtures.ts';
import type { CursorSeal } from '../src/platform/contract/cursor-seal.ts';
import { roundRobin } from './load.ts';
import { valueOf } from '../src/platform/read-path/json-text.ts';

export interface Scenario {
  name: string;
  /** A representative request, for the report. */
  request: string;
  nextPath: () => string;
  callRaw: () => Promise<unknown>;
  /** What the first page holds, to check API and raw agree before measuring. */
  fingerprint: { viaApi: (body: any) => string; viaRaw: (result: any) => string };
}

const listFingerprint = {
  viaApi: (body: any) => `${body.data.length}:${body.data[0]?.id}:${body.next_cursor}`,
  viaRaw: (text: any) => {
    const page = valueOf<any>(text);
    return `${page.data.length}:${page.data[0]?.id}:${page.next_cursor}`;
  },
};

function listScenario(name: string, db: Db, accountId: string, input: ListOrdersInput, cursors: CursorSeal): Scenario {
  const query = new URLSearchParams(input as Record<string, string>).toString();
  const path = `/api/v1/orders${query ? `?${query}` : ''}`;
  return {
    name,
    request: `GET ${path.length > 90 ? `${path.slice(0, 90)}…` : path}`,
    nextPath: () => path,
    callRaw: () => listOrders(db, accountId, input, cursors),
    fingerprint: listFingerprint,
  };
}

export function buildScenarios(db: Db, accountId: string, p: BenchParams): Scenario[] {
  const apiIds = roundRobin(p.orderIds);
  const rawIds = roundRobin(p.orderIds);
  return [
    listScenario('list: first page', db, accountId, {}, p.cursors),
    listScenario(`list: status=${p.status}`, db, accountId, { status: p.status as ListOrdersInput['status'] }, p.cursors),
    listScenario(`list: q=${p.q}`, db, accountId, { q: p.q }, p.cursors),
    listScenario(`list: since (${p.sinceMatches} rows)`, db, accountId, { since: p.since }, p.cursors),
    listScenario(`list: cursor, page ${p.deepCursorPage}`, db, accountId, { cursor: p.deepCursor }, p.cursors),
    {
      name: `order by id (${p.orderIds.length} ids)`,
      request: 'GET /api/v1/orders/{id}',
      nextPath: () => `/api/v1/orders/${apiIds()}`,
      callRaw: () => getOrder(db, accountId, rawIds()),
      fingerprint: {
        viaApi: (body: any) => body.data.id,
        viaRaw: (order: any) => order.id,
      },
    },
  ];
}

/** One request each way, compared, so a wrong parameter cannot hide behind fast 4xx answers. */
export async function checkAgreement(baseUrl: string, key: string, scenario: Scenario): Promise<void> {
  const path = scenario.nextPath();
  const res = await fetch(baseUrl + path, { headers: { authorization: `Bearer ${key}` } });
  const body = await res.json();
  if (res.status !== 200) throw new Error(`${scenario.name}: GET ${path} -> ${res.status} ${JSON.stringify(body)}`);
  const viaApi = scenario.fingerprint.viaApi(body);
  const viaRaw = scenario.fingerprint.viaRaw(await scenario.callRaw());
  // The id scenario rotates, so API and raw each took the first id of their own rotation.
  if (viaApi !== viaRaw) throw new Error(`${scenario.name}: API returned ${viaApi}, raw returned ${viaRaw}`);
}
