// now() is injectable so schedules (retries, daily jobs) can be tested with an operator-given time.
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
