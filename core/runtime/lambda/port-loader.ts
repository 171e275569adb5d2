import type { Config } from "../../config/types";
import type { CoreDeps, PortName, Ports } from "../../deps";

/**
 * Builds one port for the Lambda runtime, given the configuration, the core deps and the ports built before it
 * (in `uses` order: `worker` is built over `sql` and `blobs`). Each loader lives in its own small module and
 * imports its adapter lazily, so a route file names its loaders without the Node host loading AWS clients, and a
 * bundle holds only the adapters its route uses.
 */
export type PortLoader<P extends PortName> = (config: Config, built: Omit<CoreDeps, "config" | "custody"> & Partial<Ports>) => Promise<Ports[P]>;

/** Exactly one loader per port a route declares in `uses`. */
export type PortLoaders<U extends PortName> = { [P in U]: PortLoader<P> };
