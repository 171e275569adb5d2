-- The normalize stage's loudness figures of the current bytes and of the bytes it started from (a few hundred bytes
-- of JSON), kept with the variant they describe; null until normalize is ready, and again when another stage
-- replaces the bytes.
ALTER TABLE post_enrichment ADD COLUMN loudness json;
