-- Uploaded audio: one row per tenant, content address and MIME type (the same bytes may be declared under two
-- accepted types). Duration is measured from the bytes at upload, never taken from the client.
CREATE TABLE blobs (
  app_id      text        NOT NULL,
  cid         text        NOT NULL,
  mime_type   text        NOT NULL,
  size        bigint      NOT NULL CHECK (size > 0 AND size <= 26214400),
  duration_ms integer     CHECK (duration_ms >= 0),
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, cid, mime_type)
);

-- Direct-to-S3 uploads between their presigned POST and their completion; a completion claims (deletes) its row.
CREATE TABLE uploads (
  upload_id   text        PRIMARY KEY,
  app_id      text        NOT NULL,
  actor       text        NOT NULL,
  mime_type   text        NOT NULL,
  size        bigint      NOT NULL CHECK (size > 0 AND size <= 26214400),
  staging_key text        NOT NULL,
  expires_at  timestamptz NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX uploads_by_expiry ON uploads (expires_at);
