-- When a pass last let go of the post's lease. Between two attempts of a live job (a retry waits 5 or 20 s in the
-- queue) no pass holds the lease, but one held it a moment ago: the sweep counts a stage as lost only when no pass
-- has held its post's lease for 15 minutes, and a released lease no longer erases that a pass did.
ALTER TABLE post_enrichment ADD COLUMN released_at timestamptz;
