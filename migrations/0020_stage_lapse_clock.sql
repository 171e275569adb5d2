-- A pending stage's lapse clock, apart from its time. The sweep's first-lapse mark restarted the clock by setting the
-- stage's updated_at, which the post view shows as the stage's updatedAt, and a mark taken back (its send failed)
-- set it back again: a reader saw a pending stage's time jump with nothing changed, then go back. The mark now sets
-- lapse_from, and the clock is lapse_from when set, else updated_at; every write that queues a stage clears it.
ALTER TABLE post_stages ADD COLUMN lapse_from timestamptz;
DROP INDEX post_stages_pending;
CREATE INDEX post_stages_pending ON post_stages ((coalesce(lapse_from, updated_at))) WHERE status = 'pending';
