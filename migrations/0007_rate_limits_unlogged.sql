-- Every request, reads included, records a hit in rate_limit_hits. As an ordinary table each of those commits
-- waits for a WAL flush; unlogged, a transaction that writes nothing else commits without one (a write route's
-- transaction still flushes for its own rows). The price is allowed: after a crash of standard PostgreSQL the
-- counters start empty. Aurora PostgreSQL keeps unlogged tables crash-safe and serves them from the writer, where
-- the Data API runs every statement.
ALTER TABLE rate_limit_hits SET UNLOGGED;
