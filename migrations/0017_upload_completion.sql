-- A completion keeps its upload's row instead of deleting it: claimed for a while (another completion meanwhile is
-- told to retry), then marked with the blob it stored, so a retry whose first answer was lost (a deadline, a dropped
-- connection, a frozen Lambda) is answered the same blob instead of 404. The store janitor deletes the rows once
-- their window and grace have passed, as before.
ALTER TABLE uploads
  ADD COLUMN claimed_until timestamptz,
  ADD COLUMN blob_cid      text;
