/**
 * A tenant's appId ends up in blob paths (`blobs/<appId>/<cid>`) and limiter keys, so it stays path- and key-safe.
 * It is shorter than any token (>= 32), so an entry written the wrong way round never gets its secret logged as a name.
 */
export const appIdMaxLength = 31;
const appIdPattern = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

export const isAppId = (value: string): boolean => value.length <= appIdMaxLength && appIdPattern.test(value);
