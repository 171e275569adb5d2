import { randomBytes } from "node:crypto";
import { backends } from "../../../test/support/databases";
import { startTestService } from "../../../test/support/test-service";
import { createClient, type ClientOptions } from "../../src/index";

/** The real Node host on PGlite, with local.env's pass-through stubs running every stage inline. */
export const startClientService = (options: Omit<Parameters<typeof startTestService>[0], "driver" | "sql"> = {}) =>
  startTestService({
    driver: "node",
    sql: backends[0]!.open,
    ...options,
    env: { SVC_PROCESSING_INLINE: "true", SVC_PROCESSING_STUB: "true", ...options.env },
  });

/** A fresh actor per test keeps each test clear of the others' rate limits. */
export const freshActor = (name = "actor") => `${name}-${randomBytes(4).toString("hex")}`;

/**
 * A client of `baseUrl` with the alpha tenant's token that records each request it sends and each wait it makes,
 * waiting for none of them (the delays are asserted, not slept).
 */
export const recordingClient = (baseUrl: string, token: string, options: Partial<ClientOptions> = {}) => {
  const requests: { method: string; url: string; headers: Headers }[] = [];
  const delays: number[] = [];
  const client = createClient({
    baseUrl,
    token,
    sleep: async (ms) => {
      delays.push(ms);
    },
    fetch: (input, init) => {
      requests.push({ method: init?.method ?? "GET", url: String(input), headers: new Headers(init?.headers) });
      return fetch(input, init);
    },
    ...options,
  });
  return { client, requests, delays };
};
