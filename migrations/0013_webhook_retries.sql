-- Webhooks outlive a receiver's outage: an event whose quick attempts failed stays open (outcome NULL) and
-- claimed_until is when the sweep tries it next. `rounds` counts the rounds of attempts spent, for the exponential
-- backoff; `retry_from` is when its retrying began (NULL: its settle; else an operator's redelivery), for the give-up
-- age; 'given_up' is the outcome of an event still undelivered past that age.
ALTER TABLE webhook_events ADD COLUMN rounds integer NOT NULL DEFAULT 0;
ALTER TABLE webhook_events ADD COLUMN retry_from timestamptz;
ALTER TABLE webhook_events DROP CONSTRAINT webhook_events_outcome_check;
ALTER TABLE webhook_events ADD CONSTRAINT webhook_events_outcome_check CHECK (outcome IN ('delivered', 'failed', 'given_up'));
-- A tenant's undelivered events, oldest first, for the operator's list and redelivery.
CREATE INDEX webhook_events_undelivered ON webhook_events (app_id, occurred_at) WHERE outcome IS DISTINCT FROM 'delivered';
