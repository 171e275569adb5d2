import type { MigrationFile } from "./migrate";
import posts from "../../migrations/0001_posts.sql";
import rateLimits from "../../migrations/0002_rate_limits.sql";
import idempotency from "../../migrations/0003_idempotency.sql";
import blobs from "../../migrations/0004_blobs.sql";
import processing from "../../migrations/0005_processing.sql";
import custodyProofs from "../../migrations/0006_custody_proofs.sql";
import rateLimitsUnlogged from "../../migrations/0007_rate_limits_unlogged.sql";
import rateLimitTakeOneWrite from "../../migrations/0008_rate_limit_take_one_write.sql";
import stageNames from "../../migrations/0009_stage_names.sql";
import loudness from "../../migrations/0010_loudness.sql";
import rateLimitTakeClock from "../../migrations/0012_rate_limit_take_clock.sql";
import webhookRetries from "../../migrations/0013_webhook_retries.sql";
import rateLimitPruneSmall from "../../migrations/0014_rate_limit_prune_small.sql";
import leaseReleasedAt from "../../migrations/0015_lease_released_at.sql";
import webhookEventsRetention from "../../migrations/0016_webhook_events_retention.sql";
import uploadCompletion from "../../migrations/0017_upload_completion.sql";
import repliesInCommitOrder from "../../migrations/0018_replies_in_commit_order.sql";
import rateLimitExpiryMonotonic from "../../migrations/0019_rate_limit_expiry_monotonic.sql";
import stageLapseClock from "../../migrations/0020_stage_lapse_clock.sql";

/**
 * `migrations/` compiled into the bundle, for the deploy-time migration function (a Lambda has no migrations folder).
 * Add a line here with each new migration file; a test compares this list with the folder.
 */
export const bundledMigrations: readonly MigrationFile[] = [
  { name: "0001_posts.sql", sql: posts },
  { name: "0002_rate_limits.sql", sql: rateLimits },
  { name: "0003_idempotency.sql", sql: idempotency },
  { name: "0004_blobs.sql", sql: blobs },
  { name: "0005_processing.sql", sql: processing },
  { name: "0006_custody_proofs.sql", sql: custodyProofs },
  { name: "0007_rate_limits_unlogged.sql", sql: rateLimitsUnlogged },
  { name: "0008_rate_limit_take_one_write.sql", sql: rateLimitTakeOneWrite },
  { name: "0009_stage_names.sql", sql: stageNames },
  { name: "0010_loudness.sql", sql: loudness },
  { name: "0012_rate_limit_take_clock.sql", sql: rateLimitTakeClock },
  { name: "0013_webhook_retries.sql", sql: webhookRetries },
  { name: "0014_rate_limit_prune_small.sql", sql: rateLimitPruneSmall },
  { name: "0015_lease_released_at.sql", sql: leaseReleasedAt },
  { name: "0016_webhook_events_retention.sql", sql: webhookEventsRetention },
  { name: "0017_upload_completion.sql", sql: uploadCompletion },
  { name: "0018_replies_in_commit_order.sql", sql: repliesInCommitOrder },
  { name: "0019_rate_limit_expiry_monotonic.sql", sql: rateLimitExpiryMonotonic },
  { name: "0020_stage_lapse_clock.sql", sql: stageLapseClock },
];
