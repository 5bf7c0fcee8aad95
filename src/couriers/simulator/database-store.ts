// The in-service simulator's store on PostgreSQL: the database every instance
// shares (store.ts), through a few connections of its own (open-store.ts).
// Modes have a row only while not ok, so a call of a courier in the usual
// mode reads one index and writes nothing.
import type { Db } from '../../platform/db/db.ts';
import type { Parcel, RawEvent, SimCall, SimMode } from './simulated-courier.ts';
import { CALLS_KEPT, type SimulatorStore } from './store.ts';

/** The call log is cut back to its last 1,000 calls once per this many calls. */
const TRIM_EVERY = 100;

interface ParcelRow {
  tracking_number: string;
  slug: string;
  reference: string;
  recipient: string[];
  cod_amount: number;
  weight_kg: number;
  notify: Parcel['notify'];
  events: RawEvent[];
}

const parcelOf = (row: ParcelRow): Parcel => ({
  slug: row.slug,
  trackingNumber: row.tracking_number,
  reference: row.reference,
  recipient: row.recipient,
  codAmount: Number(row.cod_amount),
  weightKg: Number(row.weight_kg),
  notify: row.notify,
  events: row.events,
});

export class DatabaseSimulatorStore implements SimulatorStore {
  private readonly db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  async takeMode(slug: string): Promise<SimMode> {
    // One statement, so that two instances' calls never both take the last of a counted mode.
    const { rows } = await this.db.query<{ mode: SimMode }>(
      `WITH current AS (SELECT slug, mode, remaining FROM courier_sim_modes WHERE slug = $1 FOR UPDATE),
            counted AS (UPDATE courier_sim_modes m SET remaining = c.remaining - 1 FROM current c WHERE m.slug = c.slug AND c.remaining > 1),
            used_up AS (DELETE FROM courier_sim_modes m USING current c WHERE m.slug = c.slug AND c.remaining <= 1)
       SELECT mode FROM current`,
      [slug],
    );
    return rows[0]?.mode ?? 'ok';
  }

  async modeOf(slug: string): Promise<SimMode> {
    const { rows } = await this.db.query<{ mode: SimMode }>('SELECT mode FROM courier_sim_modes WHERE slug = $1', [slug]);
    return rows[0]?.mode ?? 'ok';
  }

  async setMode(slug: string, mode: SimMode, times?: number): Promise<void> {
    if (mode === 'ok') {
      await this.db.query('DELETE FROM courier_sim_modes WHERE slug = $1', [slug]);
      return;
    }
    await this.db.query(
      `INSERT INTO courier_sim_modes (slug, mode, remaining) VALUES ($1, $2, $3)
       ON CONFLICT (slug) DO UPDATE SET mode = EXCLUDED.mode, remaining = EXCLUDED.remaining`,
      [slug, mode, times ?? null],
    );
  }

  async openCall(slug: string, call: SimCall) {
    const { rows } = await this.db.query<{ id: string }>('INSERT INTO courier_sim_calls (slug, at, operation) VALUES ($1, $2, $3) RETURNING id', [
      slug,
      call.at,
      call.operation,
    ]);
    const id = rows[0].id;
    if (Number(id) % TRIM_EVERY === 0) await this.trim(slug);
    return (status: number | null, durationMs: number) => {
      // The answer has gone; its log line must not hold it up or fail it.
      this.db.query('UPDATE courier_sim_calls SET status = $2, duration_ms = $3 WHERE id = $1', [id, status, durationMs]).catch(() => {});
    };
  }

  private async trim(slug: string): Promise<void> {
    await this.db.query(
      `DELETE FROM courier_sim_calls WHERE slug = $1
          AND id < (SELECT id FROM courier_sim_calls WHERE slug = $1 ORDER BY id DESC OFFSET $2 LIMIT 1)`,
      [slug, CALLS_KEPT - 1],
    );
  }

  async calls(slug: string): Promise<SimCall[]> {
    const { rows } = await this.db.query<{ at: Date | string; operation: string; status: number | null; duration_ms: number | null }>(
      `SELECT at, operation, status, duration_ms FROM
         (SELECT id, at, operation, status, duration_ms FROM courier_sim_calls WHERE slug = $1 ORDER BY id DESC LIMIT $2) last
       ORDER BY id`,
      [slug, CALLS_KEPT],
    );
    return rows.map((r) => ({
      at: new Date(r.at).toISOString(),
      operation: r.operation,
      status: r.status,
      duration_ms: r.duration_ms === null ? null : Number(r.duration_ms),
    }));
  }

  async putParcel(parcel: Parcel): Promise<void> {
    await this.db.query(
      `INSERT INTO courier_sim_parcels (tracking_number, slug, reference, recipient, cod_amount, weight_kg, notify, events)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (tracking_number) DO UPDATE SET reference = EXCLUDED.reference, recipient = EXCLUDED.recipient,
         cod_amount = EXCLUDED.cod_amount, weight_kg = EXCLUDED.weight_kg, notify = EXCLUDED.notify, events = EXCLUDED.events`,
      [
        parcel.trackingNumber,
        parcel.slug,
        parcel.reference,
        JSON.stringify(parcel.recipient),
        parcel.codAmount,
        parcel.weightKg,
        parcel.notify && JSON.stringify(parcel.notify),
        JSON.stringify(parcel.events),
      ],
    );
  }

  async parcels(trackingNumbers: string[]): Promise<Parcel[]> {
    if (!trackingNumbers.length) return [];
    const { rows } = await this.db.query<ParcelRow>(
      `SELECT p.* FROM unnest($1::text[]) WITH ORDINALITY AS asked (tracking_number, position)
         JOIN courier_sim_parcels p USING (tracking_number) ORDER BY asked.position`,
      [trackingNumbers],
    );
    return rows.map(parcelOf);
  }

  async trackingNumbers(): Promise<string[]> {
    const { rows } = await this.db.query<{ tracking_number: string }>(
      'SELECT tracking_number FROM courier_sim_parcels ORDER BY created_at, tracking_number',
    );
    return rows.map((r) => r.tracking_number);
  }

  async forgetParcel(trackingNumber: string): Promise<void> {
    await this.db.query('DELETE FROM courier_sim_parcels WHERE tracking_number = $1', [trackingNumber]);
  }

  async appendEvent(trackingNumber: string, event: RawEvent): Promise<void> {
    await this.db.query('UPDATE courier_sim_parcels SET events = events || jsonb_build_array($2::jsonb) WHERE tracking_number = $1', [
      trackingNumber,
      JSON.stringify(event),
    ]);
  }
}
