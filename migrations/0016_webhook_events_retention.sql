-- Events with an outcome are deleted by the sweep once older than SVC_WEBHOOK_RETENTION_SECONDS (oldest first, a
-- batch a run): this index finds them without reading the open ones or the table.
CREATE INDEX webhook_events_settled ON webhook_events (settled_at) WHERE outcome IS NOT NULL;
