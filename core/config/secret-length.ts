/** Every secret the service accepts (tokens, signing keys, webhook secrets) is at least this long. */
export const minSecretLength = 32;

/** A per-tenant list entry's validator (`parseAppList`): why a secret named `what` is too short, or undefined. */
export const shortSecret = (what: string) => (value: string) =>
  value.length < minSecretLength ? `${what} is shorter than ${minSecretLength} characters` : undefined;
