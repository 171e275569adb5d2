/** How long /health waits on each store: it answers within 2 s whatever the stores do. */
export const healthProbeMs = 1_500;

/**
 * A store probe's answer, or `unavailable` when it fails or has not answered within `ms` (the probe is left to
 * finish on its own; a black-holed database must not hold the health check).
 */
export const probeWithin = <T>(
  probe: Promise<T>,
  ms: number = healthProbeMs,
  /** Told why a probe reports `unavailable` (the error, or the timeout), so the health log says why. */
  unavailable: (reason: Error) => void = () => {},
): Promise<T | "unavailable"> =>
  new Promise((resolve) => {
    const timer = setTimeout(() => {
      unavailable(new Error(`no answer within ${ms} ms`));
      resolve("unavailable");
    }, ms);
    probe
      .then(
        (value) => resolve(value),
        (error: unknown) => {
          unavailable(error instanceof Error ? error : new Error(String(error)));
          resolve("unavailable");
        },
      )
      .finally(() => clearTimeout(timer));
  });
