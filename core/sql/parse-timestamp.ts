/**
 * Reads a Postgres or Data API timestamp ("2024-01-02 03:04:05.678901+00", "2024-01-02 03:04:05.678",
 * "2024-01-02T03:04:05.678Z") as a Date. A value without an offset is UTC: `timestamp` columns and the
 * Data API both carry UTC wall time, and the host's time zone must never shift it.
 */
const TIMESTAMP = /^(\d{4,})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?\s*(Z|[+-]\d{2}(?::?\d{2}(?::?\d{2})?)?)?( BC)?$/i;

export const parseTimestamp = (text: string): Date => {
  if (text === "infinity") return new Date(8.64e15);
  if (text === "-infinity") return new Date(-8.64e15);
  const m = TIMESTAMP.exec(text.trim());
  if (!m || m[9]) return new Date(Number.NaN);
  const [, y, mo, d, h, mi, s, frac = "", zone = "Z"] = m;
  const ms = Number(frac.padEnd(3, "0").slice(0, 3));
  const utc = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms);
  // Date.UTC maps years 0..99 to 1900..1999; set the full year back.
  const at = new Date(utc);
  if (Number(y) < 100) at.setUTCFullYear(Number(y));
  return new Date(at.getTime() - offsetMs(zone));
};

/**
 * A timestamp a statement returned, as ISO 8601 with its milliseconds: a Date where the adapter parsed the column,
 * the text where JSON carried it (json_build_object). String() of a Date would drop the milliseconds and the zone's name.
 */
export const isoTimestamp = (value: unknown): string => (value instanceof Date ? value : parseTimestamp(String(value))).toISOString();

const offsetMs = (zone: string): number => {
  if (zone.toUpperCase() === "Z") return 0;
  const sign = zone.startsWith("-") ? -1 : 1;
  const digits = zone.slice(1).replace(/:/g, "");
  const hours = Number(digits.slice(0, 2));
  const minutes = Number(digits.slice(2, 4) || "0");
  const seconds = Number(digits.slice(4, 6) || "0");
  return sign * ((hours * 60 + minutes) * 60 + seconds) * 1000;
};
