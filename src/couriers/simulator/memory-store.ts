// The standalone simulator's store: one process, its memory (store.ts).
import type { Parcel, RawEvent, SimCall, SimMode } from './simulated-courier.ts';
import { CALLS_KEPT, type SimulatorStore } from './store.ts';

export class MemorySimulatorStore implements SimulatorStore {
  private readonly modes = new Map<string, { mode: SimMode; remaining: number | null }>();
  private readonly parcelsByNumber = new Map<string, Parcel>();
  private readonly callLogs = new Map<string, SimCall[]>();

  async takeMode(slug: string): Promise<SimMode> {
    const current = this.modes.get(slug);
    if (!current) return 'ok';
    if (current.remaining !== null) {
      if (current.remaining <= 1) this.modes.delete(slug);
      else current.remaining -= 1;
    }
    return current.mode;
  }

  async modeOf(slug: string): Promise<SimMode> {
    return this.modes.get(slug)?.mode ?? 'ok';
  }

  async setMode(slug: string, mode: SimMode, times?: number): Promise<void> {
    if (mode === 'ok') this.modes.delete(slug);
    else this.modes.set(slug, { mode, remaining: times ?? null });
  }

  async openCall(slug: string, call: SimCall) {
    const log = this.callLogs.get(slug) ?? [];
    this.callLogs.set(slug, log);
    const logged = { ...call };
    log.push(logged);
    if (log.length > CALLS_KEPT) log.splice(0, log.length - CALLS_KEPT);
    return (status: number | null, durationMs: number) => {
      logged.status = status;
      logged.duration_ms = durationMs;
    };
  }

  async calls(slug: string): Promise<SimCall[]> {
    return (this.callLogs.get(slug) ?? []).map((call) => ({ ...call }));
  }

  async putParcel(parcel: Parcel): Promise<void> {
    this.parcelsByNumber.set(parcel.trackingNumber, structuredClone(parcel));
  }

  async parcels(trackingNumbers: string[]): Promise<Parcel[]> {
    return trackingNumbers.flatMap((n) => {
      const parcel = this.parcelsByNumber.get(n);
      return parcel ? [structuredClone(parcel)] : [];
    });
  }

  async trackingNumbers(): Promise<string[]> {
    return [...this.parcelsByNumber.keys()];
  }

  async forgetParcel(trackingNumber: string): Promise<void> {
    this.parcelsByNumber.delete(trackingNumber);
  }

  async appendEvent(trackingNumber: string, event: RawEvent): Promise<void> {
    this.parcelsByNumber.get(trackingNumber)?.events.push({ ...event });
  }
}
