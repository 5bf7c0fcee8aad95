// How busy the machine was during a measurement, split into the bench's own
// processes (this process, the service child, the PostgreSQL backends of the
// bench database) and everything else. On a shared 2-core machine "other"
// is what makes two runs disagree; the report shows it next to each number.
// Linux only (/proc); elsewhere it reports nothing.
import fs from 'node:fs';
import os from 'node:os';

export interface CpuShare {
  /** Cores' worth of CPU used by the bench's processes. */
  benchCores: number;
  /** Cores' worth used by anything else on the machine. */
  otherCores: number;
}

interface Snapshot {
  busy: number;
  total: number;
  perPid: Map<number, number>;
}

function machineJiffies(): { busy: number; total: number } | null {
  try {
    const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0];
    const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
    const busy = user + nice + system + irq + softirq + steal;
    return { busy, total: busy + idle + iowait };
  } catch {
    return null;
  }
}

/** CPU time (user + system) a process has used so far, in jiffies (1/100 s on Linux), or null when it cannot be read. */
export function pidJiffies(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may hold spaces: utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}

export class CpuMeter {
  private pidsOf: () => Promise<number[]>;
  private start: Snapshot | null = null;

  /** `pidsOf` lists the bench's processes; asked at the start and the end of each measurement. */
  constructor(pidsOf: () => Promise<number[]>) {
    this.pidsOf = pidsOf;
  }

  private async snapshot(): Promise<Snapshot | null> {
    const machine = machineJiffies();
    if (!machine) return null;
    const perPid = new Map<number, number>();
    for (const pid of await this.pidsOf()) {
      const jiffies = pidJiffies(pid);
      if (jiffies !== null) perPid.set(pid, jiffies);
    }
    return { ...machine, perPid };
  }

  async begin(): Promise<void> {
    this.start = await this.snapshot();
  }

  async end(): Promise<CpuShare | null> {
    const start = this.start;
    const end = await this.snapshot();
    if (!start || !end || end.total <= start.total) return null;
    let bench = 0;
    for (const [pid, jiffies] of end.perPid) bench += jiffies - (start.perPid.get(pid) ?? 0);
    const jiffiesPerCore = (end.total - start.total) / os.cpus().length;
    const busy = end.busy - start.busy;
    return { benchCores: bench / jiffiesPerCore, otherCores: Math.max(0, busy - bench) / jiffiesPerCore };
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Cores' worth of CPU the whole machine used over the next `ms` (null where /proc is missing). */
async function machineBusyCores(ms: number): Promise<number | null> {
  const before = machineJiffies();
  await sleep(ms);
  const after = machineJiffies();
  if (!before || !after || after.total <= before.total) return null;
  return ((after.busy - before.busy) / (after.total - before.total)) * os.cpus().length;
}

/**
 * Called while the bench itself is idle: waits, within a budget shared by the
 * whole run, until other work leaves the machine (below `threshold` cores busy).
 * Returns the last reading, so a run that had to go ahead on a busy machine says so.
 */
export async function waitForQuiet(budget: { seconds: number }, threshold = 0.3): Promise<number | null> {
  let busy = await machineBusyCores(1000);
  while (busy !== null && busy > threshold && budget.seconds > 0) {
    budget.seconds -= 1;
    busy = await machineBusyCores(1000);
  }
  return busy;
}

/**
 * What `<command> && times >&2` run by bash printed last: its children's user
 * and system CPU (the second line of `times`, "0m1.234s 0m0.567s"), in ms.
 */
export function childCpuMs(timesOutput: string): number | null {
  const line = timesOutput.trim().split('\n').at(-1) ?? '';
  const parts = [...line.matchAll(/(\d+)m([\d.]+)s/g)];
  return parts.length === 2 ? parts.reduce((ms, [, m, s]) => ms + (Number(m) * 60 + Number(s)) * 1000, 0) : null;
}
