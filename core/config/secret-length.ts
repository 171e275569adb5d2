/** Every secret the service accepts (tokens, signing keys, webhook secrets) is at least this long. */
export const minSecretLength = 32;

/** Counted in characters (code points), not UTF-16 units: 16 emoji are 32 units but 16 characters. */
export const isShortSecret = (value: string): boolean => [...value].length < minSecretLength;

/** A per-tenant list entry's validator (`parseAppList`): why a secret named `what` is too short, or undefined. */
export const shortSecret = (what: string) => (value: string) =>
  isShortSecret(value) ? `${what} is shorter than ${minSecretLength} characters` : undefined;
