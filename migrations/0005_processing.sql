-- Enrichment state, kept beside the post: the author's record and its cid never change when processing runs.

-- One row per requested stage of a post. `generation` grows each time the stage goes (back) to pending, so a
-- settle only lands on the very request it answers (a late or duplicate job settles nothing twice).
CREATE TABLE post_stages (
  app_id        text        NOT NULL,
  rkey          text        NOT NULL,
  stage         text        NOT NULL CHECK (stage IN ('denoise', 'trim', 'transcribe', 'waveform')),
  status        text        NOT NULL CHECK (status IN ('pending', 'ready', 'failed', 'skipped')),
  reason        text        CHECK (reason IN ('no_provider', 'provider_misconfigured', 'dispatch_off', 'provider_error', 'timeout', 'dead_letter')),
  updated_at    timestamptz NOT NULL,
  generation    integer     NOT NULL DEFAULT 1,
  -- The sweep dispatches a lapsed pending stage again once; the second lapse settles it failed (timeout).
  redispatched  boolean     NOT NULL DEFAULT false,
  PRIMARY KEY (app_id, rkey, stage),
  FOREIGN KEY (app_id, rkey) REFERENCES posts (app_id, rkey) ON DELETE CASCADE,
  CONSTRAINT post_stages_reason CHECK ((status IN ('failed', 'skipped')) = (reason IS NOT NULL))
);

CREATE INDEX post_stages_pending ON post_stages (updated_at) WHERE status = 'pending';

-- Per post: the worker lease (fenced by its token) and the artifacts of settled stages.
CREATE TABLE post_enrichment (
  app_id            text        NOT NULL,
  rkey              text        NOT NULL,
  lease_token       text,
  lease_until       timestamptz,
  -- The current processed variant (after denoise or trim); null while the upload itself is current.
  audio_cid         text,
  audio_mime_type   text,
  audio_size        bigint,
  audio_duration_ms integer,
  -- BBC audiowaveform JSON v2 of the current bytes.
  waveform          json,
  PRIMARY KEY (app_id, rkey),
  FOREIGN KEY (app_id, rkey) REFERENCES posts (app_id, rkey) ON DELETE CASCADE,
  CONSTRAINT post_enrichment_lease CHECK ((lease_token IS NULL) = (lease_until IS NULL))
);

-- The dev.svc.audio.transcript record of a post: one per post, replaced when transcription reruns.
CREATE TABLE transcripts (
  app_id     text        NOT NULL,
  rkey       text        NOT NULL,
  record     json        NOT NULL,
  cid        text        NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (app_id, rkey),
  FOREIGN KEY (app_id, rkey) REFERENCES posts (app_id, rkey) ON DELETE CASCADE
);

-- Webhook outbox: each settle event is written in the statement or transaction of the settle itself, then
-- delivered from here, so a process that dies between the two loses nothing (the sweep delivers what is left).
CREATE TABLE webhook_events (
  event_id      uuid        PRIMARY KEY,
  app_id        text        NOT NULL,
  rkey          text        NOT NULL,
  stage         text        NOT NULL,
  status        text        NOT NULL CHECK (status IN ('ready', 'failed', 'skipped')),
  occurred_at   timestamptz NOT NULL,
  -- A deliverer holds an event until then; past it the sweep may take it over.
  claimed_until timestamptz NOT NULL,
  attempts      integer     NOT NULL DEFAULT 0,
  -- 'delivered', or 'failed' once the attempts are spent or the receiver refused it.
  outcome       text        CHECK (outcome IN ('delivered', 'failed')),
  settled_at    timestamptz
);

CREATE INDEX webhook_events_open ON webhook_events (claimed_until) WHERE outcome IS NULL;
