/**
 * Proves that a tenant's did:web document points its custody service at this deployment
 * (docs/decisions.md#tenancy-and-custody): fetched without following redirects, cached, kept through outages.
 */
import { DomainError } from "../domain-error";
import { checkCustodyDocument } from "./custody-document";
import type { CustodyProofs } from "./custody-proofs";
import { didWebDocumentUrl } from "./did-web";
import { readCapped } from "./read-capped";
import type { Logger } from "../observability/logger";

export interface CustodyOptions {
  /** SVC_PDS_HOST: the host (optionally host:port) the custody service endpoint must name. */
  pdsHost: string;
  fetch?: typeof fetch;
  now?: () => number;
  log: Pick<Logger, "error" | "warn" | "info">;
  /** Where proofs outlive this process (the database on Lambda, so a cold start keeps the grace); none by default. */
  proofs?: CustodyProofs;
  /** Per-fetch timeout; default 3 s. */
  timeoutMs?: number;
}

export interface Custody {
  /** Resolves when custody of the tenant's DID is proven; throws DomainError TENANT_UNAVAILABLE otherwise. */
  prove(tenant: { appId: string; did?: string }): Promise<void>;
}

const second = 1000;
const hour = 3600 * second;
/** A proof is trusted without a fetch for this long. */
export const proofFreshMs = hour;
/** While the document is unreachable, the last good proof holds this long after it was made. */
export const proofGraceMs = 24 * hour;
/** After any fetch, the next is at least this far away, so a broken tenant costs one fetch per 30 s, not one per request. */
export const retryAfterMs = 30 * second;
export const maxDocumentBytes = 64 * 1024;

type Check = { ok: true } | { ok: false; reachable: boolean; reason: string };

interface Entry {
  did: string;
  /** When the last good proof was made; null when never proven or revoked. */
  provenAt: number | null;
  attemptedAt: number;
}

export function createCustody(opts: CustodyOptions): Custody {
  const fetchImpl = opts.fetch ?? fetch;
  const now = opts.now ?? Date.now;
  const timeoutMs = opts.timeoutMs ?? 3 * second;
  const entries = new Map<string, Entry>();
  const inflight = new Map<string, Promise<void>>();
  const loading = new Map<string, Promise<void>>();
  // The shared store is a cache: when it fails, custody is decided as if it were absent.
  const shared = async (what: string, work: () => Promise<void>) =>
    work().catch((error: unknown) => opts.log.warn(`custody proof store: ${what} failed`, { error: String(error) }));

  /** A cold process starts from the last proof any process made, so a fresh proof is not fetched again. */
  const hydrate = (appId: string) => {
    let pending = loading.get(appId);
    if (!pending) {
      pending = shared("load", async () => {
        const stored = await opts.proofs!.load(appId);
        if (stored && !entries.has(appId)) entries.set(appId, { did: stored.did, provenAt: stored.provenAt, attemptedAt: -Infinity });
      }).finally(() => loading.delete(appId));
      loading.set(appId, pending);
    }
    return pending;
  };

  const unavailable = () => new DomainError("TENANT_UNAVAILABLE", "Custody of the tenant's DID is not proven");

  const holds = (entry: Entry | undefined, did: string, at: number, limit: number) =>
    entry !== undefined && entry.did === did && entry.provenAt !== null && at - entry.provenAt < limit;

  async function fetchAndCheck(did: string): Promise<Check> {
    let url: string;
    try {
      url = didWebDocumentUrl(did);
    } catch (err) {
      return { ok: false, reachable: true, reason: (err as Error).message };
    }
    let body: string;
    try {
      const res = await fetchImpl(url, {
        redirect: "manual",
        signal: AbortSignal.timeout(timeoutMs),
        headers: { accept: "application/did+json, application/json" },
      });
      if (res.status !== 200) {
        await res.body?.cancel().catch(() => {});
        // Server errors and throttling are outages; anything else (404, a redirect...) is the document's answer.
        const reachable = res.status < 500 && res.status !== 429;
        return { ok: false, reachable, reason: `document fetch answered ${res.status || res.type}` };
      }
      const text = await readCapped(res, maxDocumentBytes);
      if (text === null) return { ok: false, reachable: true, reason: `document is larger than ${maxDocumentBytes} bytes` };
      body = text;
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      const detail = cause?.code ?? cause?.message ?? (err as Error).message;
      return { ok: false, reachable: false, reason: `document unreachable: ${detail}` };
    }
    let doc: unknown;
    try {
      doc = JSON.parse(body);
    } catch {
      return { ok: false, reachable: true, reason: "document is not valid JSON" };
    }
    const check = checkCustodyDocument(did, doc, opts.pdsHost);
    return check.ok ? check : { ...check, reachable: true };
  }

  /**
   * The proof an outage keeps. Another process may have seen the document revoke it (and deleted the stored row), so
   * the shared row must still be there for this DID; the earlier of the two proofs starts the grace.
   */
  async function keptThroughOutage(appId: string, did: string, kept: number | null): Promise<number | null> {
    if (!opts.proofs) return kept;
    let result = kept;
    await shared("load", async () => {
      const stored = await opts.proofs!.load(appId);
      result = stored?.did !== did ? null : kept === null ? stored.provenAt : Math.min(kept, stored.provenAt);
    });
    return result;
  }

  async function refresh(appId: string, did: string): Promise<void> {
    const startedAt = now();
    const previous = entries.get(appId);
    const check = await fetchAndCheck(did);
    const kept = previous && previous.did === did ? previous.provenAt : null;
    // A reachable document that fails the check revokes at once; an outage keeps the last good proof (prove() applies the grace).
    const provenAt = check.ok ? startedAt : check.reachable ? null : await keptThroughOutage(appId, did, kept);
    entries.set(appId, { did, provenAt, attemptedAt: startedAt });
    if (opts.proofs && check.ok) await shared("save", () => opts.proofs!.save(appId, did, startedAt));
    if (opts.proofs && !check.ok && check.reachable) await shared("revoke", () => opts.proofs!.revoke(appId));
    if (check.ok) {
      opts.log.info("tenant custody proven", { appId, did });
    } else if (provenAt !== null && startedAt - provenAt < proofGraceMs) {
      opts.log.warn("tenant DID document unreachable; last good custody proof still holds", {
        appId,
        did,
        reason: check.reason,
        provenAt: new Date(provenAt).toISOString(),
      });
    } else {
      opts.log.error("tenant custody not proven", { appId, did, reason: check.reason });
    }
  }

  async function prove(tenant: { appId: string; did?: string }): Promise<void> {
    const { appId, did } = tenant;
    if (!did) throw unavailable();
    if (opts.proofs && !entries.has(appId)) await hydrate(appId);
    const at = now();
    const entry = entries.get(appId);
    if (holds(entry, did, at, proofFreshMs)) return;
    const recentlyTried = entry !== undefined && entry.did === did && at - entry.attemptedAt < retryAfterMs;
    if (!recentlyTried) {
      let pending = inflight.get(appId);
      if (!pending) {
        pending = refresh(appId, did).finally(() => inflight.delete(appId));
        inflight.set(appId, pending);
      }
      await pending;
    }
    if (!holds(entries.get(appId), did, now(), proofGraceMs)) throw unavailable();
  }

  return { prove };
}
