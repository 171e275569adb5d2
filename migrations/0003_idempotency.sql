-- Idempotency-Key claims for POST /api/v1/posts, scoped by tenant, actor and route, kept 24 hours.
CREATE TABLE idempotency_keys (
  app_id          text        NOT NULL,
  actor           text        NOT NULL,
  route           text        NOT NULL,
  key             text        NOT NULL,
  -- sha256 of the canonical (dag-cbor) request body: the same key with another body is refused.
  fingerprint     text        NOT NULL,
  state           text        NOT NULL CHECK (state IN ('running', 'done')),
  response_status integer,
  -- json, not jsonb: a replay answers the stored body byte for byte.
  response_body   json,
  -- Lease of a running claim: past it the claimant is presumed dead and the key may be taken over.
  locked_until    timestamptz NOT NULL,
  expires_at      timestamptz NOT NULL,
  PRIMARY KEY (app_id, actor, route, key),
  CONSTRAINT idempotency_keys_done_has_response CHECK (state = 'running' OR response_status IS NOT NULL)
);

CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at);
