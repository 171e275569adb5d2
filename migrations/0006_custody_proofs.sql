-- The last good custody proof of each tenant, shared by every process (each Lambda container, each Node host), so
-- the hour of trust and the 24-hour grace of docs/decisions.md#tenancy-and-custody survive cold starts. A revoked proof is deleted.
CREATE TABLE custody_proofs (
  app_id    text        PRIMARY KEY,
  did       text        NOT NULL,
  proven_at timestamptz NOT NULL
);
