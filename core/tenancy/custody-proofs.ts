import type { Sql } from "../sql/port";

/** Where custody proofs outlive a process: read on a cold start, written when a proof is made or revoked. */
export interface CustodyProofs {
  load(appId: string): Promise<{ did: string; provenAt: number } | undefined>;
  save(appId: string, did: string, provenAt: number): Promise<void>;
  revoke(appId: string): Promise<void>;
}

/** Custody proofs in the `custody_proofs` table (migration 0006): one statement per call. */
export const sqlCustodyProofs = (sql: Sql): CustodyProofs => ({
  async load(appId) {
    const [row] = await sql.query<{ did: string; proven_at: Date }>("SELECT did, proven_at FROM custody_proofs WHERE app_id = $1", [appId]);
    return row ? { did: row.did, provenAt: new Date(row.proven_at).getTime() } : undefined;
  },
  async save(appId, did, provenAt) {
    // A slower process must not move a newer proof back in time.
    await sql.query(
      `INSERT INTO custody_proofs (app_id, did, proven_at) VALUES ($1, $2, $3)
       ON CONFLICT (app_id) DO UPDATE SET did = EXCLUDED.did, proven_at = EXCLUDED.proven_at
       WHERE custody_proofs.did <> EXCLUDED.did OR custody_proofs.proven_at < EXCLUDED.proven_at`,
      [appId, did, new Date(provenAt)],
    );
  },
  async revoke(appId) {
    await sql.query("DELETE FROM custody_proofs WHERE app_id = $1", [appId]);
  },
});
