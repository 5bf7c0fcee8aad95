// Where the courier simulator keeps its parcels, modes and call log. Inside
// the service it is the database (database-store.ts): every instance plays
// the same couriers, as a real courier is one for all of them, so a waybill
// made through one instance is known to the courier another one calls, and
// an operator's mode reaches every instance. Standalone (`npx merx
// courier-sim`) it is the process's memory (memory-store.ts).
import type { Parcel, RawEvent, SimCall, SimMode } from './simulated-courier.ts';

/** OPERATOR_API: the call log keeps each courier's last 1,000 calls. */
export const CALLS_KEPT = 1000;

export interface SimulatorStore {
  /** The mode one call gets; a counted mode (`times`) is used up by it, then the courier is ok again. */
  takeMode(slug: string): Promise<SimMode>;
  /** The courier's mode now, without using a call. */
  modeOf(slug: string): Promise<SimMode>;
  /** `times` limits the mode to that many next calls. */
  setMode(slug: string, mode: SimMode, times?: number): Promise<void>;
  /** Logs a call as it arrives; the returned function closes it with the status answered (null: no answer). */
  openCall(slug: string, call: SimCall): Promise<(status: number | null, durationMs: number) => void>;
  /** The courier's last 1,000 calls, oldest first. */
  calls(slug: string): Promise<SimCall[]>;
  /** Stores the parcel, or replaces the courier's record of it. */
  putParcel(parcel: Parcel): Promise<void>;
  /** The parcels with these numbers that exist, in the order asked. */
  parcels(trackingNumbers: string[]): Promise<Parcel[]>;
  /** Every waybill number the courier issued, oldest first. */
  trackingNumbers(): Promise<string[]>;
  /** The courier loses its record of a waybill. */
  forgetParcel(trackingNumber: string): Promise<void>;
  /** Appends an event to the parcel's history. */
  appendEvent(trackingNumber: string, event: RawEvent): Promise<void>;
}
