// Which store the in-service simulator keeps its parcels in (store.ts).
import { openDb, type OpenOptions } from '../../platform/db/open-db.ts';
import type { Db } from '../../platform/db/db.ts';
import { DatabaseSimulatorStore } from './database-store.ts';
import { MemorySimulatorStore } from './memory-store.ts';
import type { SimulatorStore } from './store.ts';

/**
 * The simulator's own connections: the service calls a courier while it
 * holds a transaction (a shipment's order stays locked until the waybill is
 * stored), so the simulator answering that call must not wait for a
 * connection of the same pool, which such calls may all be holding.
 */
const SIMULATOR_POOL_MAX = 4;

/**
 * On PostgreSQL, the database every instance shares, so that all of them
 * play one courier. On PGlite, this process's memory: the embedded database
 * has one process, and its one connection is the one a shipment's
 * transaction holds while it calls the courier.
 */
export async function openSimulatorStore(db: Db, options: OpenOptions): Promise<{ store: SimulatorStore; close(): Promise<void> }> {
  if (db.kind !== 'postgres') return { store: new MemorySimulatorStore(), close: async () => {} };
  const own = await openDb({ ...options, poolMax: SIMULATOR_POOL_MAX });
  return { store: new DatabaseSimulatorStore(own), close: () => own.close() };
}
