/**
 * Whether a Node version satisfies a package's `engines.node` range, as npm judges it for EBADENGINE: ranges joined
 * by `||`, each a list of comparators (`>=`, `>`, `<=`, `<`, `=`, `^`, `~`, a bare or wildcard version: `20`,
 * `6.*`, `0.4.x`, `*`). Enough for every range in the lockfile; a form it does not know throws, so the test that
 * uses it cannot pass by misreading one.
 */
type Version = [number, number, number];

const parse = (text: string): { version: Version; given: number } => {
  const parts = text.replace(/^v/, "").split(".");
  const given = parts.findIndex((p) => p === "x" || p === "X" || p === "*");
  const numbers = parts.slice(0, given < 0 ? 3 : given);
  if (numbers.some((p) => !/^\d+$/.test(p)) || numbers.length > 3) throw new Error(`not a version: ${text}`);
  const version = [0, 1, 2].map((i) => Number(numbers[i] ?? 0)) as Version;
  return { version, given: numbers.length };
};

const compare = (a: Version, b: Version): number => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/** The versions a comparator accepts, as [lower bound inclusive, upper bound exclusive]. */
const bounds = (op: string, text: string): [Version | null, Version | null, boolean] => {
  const { version: v, given } = parse(text);
  const next = (i: number): Version => (i === 0 ? [v[0] + 1, 0, 0] : i === 1 ? [v[0], v[1] + 1, 0] : [v[0], v[1], v[2] + 1]);
  if (given === 0) return [null, null, true];
  switch (op) {
    case ">=": return [v, null, true];
    case ">": return [given === 3 ? next(2) : next(given - 1), null, true];
    case "<": return [null, v, true];
    case "<=": return [null, given === 3 ? next(2) : next(given - 1), true];
    case "^": return [v, v[0] > 0 || given === 1 ? next(0) : v[1] > 0 || given === 2 ? next(1) : next(2), true];
    case "~": return [v, given === 1 ? next(0) : next(1), true];
    case "":
    case "=": return [v, given === 3 ? next(2) : next(given - 1), true];
    default: throw new Error(`unknown comparator ${op}${text}`);
  }
};

export const satisfiesNodeRange = (nodeVersion: string, range: string): boolean => {
  const version = parse(nodeVersion).version;
  return range.split("||").some((alternative) => {
    const comparators = alternative.replace(/^\s*node\s+/, "").replace(/(>=|<=|>|<|=|\^|~)\s+/g, "$1").trim().split(/\s+/).filter(Boolean);
    if (comparators.length === 0) return true;
    return comparators.every((comparator) => {
      const [, op, text] = /^(>=|<=|>|<|=|\^|~)?(.+)$/.exec(comparator) ?? [];
      if (text === undefined) throw new Error(`unknown range ${range}`);
      const [lower, upper] = bounds(op ?? "", text);
      return (!lower || compare(version, lower) >= 0) && (!upper || compare(version, upper) < 0);
    });
  });
};
