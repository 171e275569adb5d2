/**
 * The host's own clock: `deps.now` unless a test moves time. Rate-limit windows are measured on the database's clock
 * whenever the host's is this one: processes whose clocks differ would each open a window edge of their own, and a
 * burst in the gap between them would get a second quota.
 */
export const systemClock = (): Date => new Date();

/** The time rate-limit windows are measured at: null (the database's own clock) unless a test set the clock. */
export const windowClock = (now: () => Date): Date | null => (now === systemClock ? null : now());
