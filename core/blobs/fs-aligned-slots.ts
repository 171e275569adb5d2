/**
 * Page-aligned 1 MiB buffers for direct I/O (fs-direct-writer.ts). They are carved from WebAssembly memories, the
 * one page-aligned allocation JavaScript can ask for. Each memory reserves ~10 GiB of address space (V8's guard
 * regions; it allows about a hundred), so arenas are large and few: 64 slots each, taken last-in first-out, so only
 * as many pages are touched as the busiest moment needed. Arenas are kept once made.
 */

/** The device block every offset, length and address of a direct write is aligned to; 4 KiB covers every common device. */
export const directAlign = 4096;
export const slotBytes = 1024 * 1024;
const arenaSlots = 64;
const freeSlots: Buffer[] = [];

/** A page-aligned slot; it throws when no aligned memory can be had (an address-space limit such as `ulimit -v`). */
export function takeSlot(): Buffer {
  const slot = freeSlots.pop();
  if (slot) return slot;
  const arena = Buffer.from(new WebAssembly.Memory({ initial: (arenaSlots * slotBytes) / 65536 }).buffer);
  for (let i = 1; i < arenaSlots; i++) freeSlots.push(arena.subarray(i * slotBytes, (i + 1) * slotBytes));
  return arena.subarray(0, slotBytes);
}

/** Gives a slot back for the next upload. */
export const returnSlot = (slot: Buffer): void => void freeSlots.push(slot);

/** For tests: the aligned slots waiting for their next upload (a finished or failed upload gives its slots back). */
export const freeDirectSlots = () => freeSlots.length;
