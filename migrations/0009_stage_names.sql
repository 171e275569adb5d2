-- The list of stages lives in code (core/records/stages.ts), which writes only the stages it knows: the database
-- keeps a stage's name well-formed, so adding a stage needs no migration.
ALTER TABLE post_stages DROP CONSTRAINT post_stages_stage_check;
ALTER TABLE post_stages ADD CONSTRAINT post_stages_stage_name CHECK (stage ~ '^[a-z][a-z0-9_]*$');
