/** How long /health waits on each store: it answers within 2 s whatever the stores do. */
export const healthProbeMs = 1_500;

/**
 * A store probe's answer, or `unavailable` when it fails or has not answered within `ms` (the probe is left to
 * finish on its own; a black-holed database must not hold the health check).
 */
export const probeWithin = <T>(probe: Promise<T>, ms: number = healthProbeMs): Promise<T | "unavailable"> =>
  new Promise((resolve) => {
    const timer = setTimeout(() => resolve("unavailable"), ms);
    probe.then(
      (value) => resolve(value),
      () => resolve("unavailable"),
    ).finally(() => clearTimeout(timer));
  });
