-- Posts: the author-written record plus facets derived from it, so a query facet can never drift from the record.
CREATE TABLE posts (
  app_id           text        NOT NULL,
  rkey             text        NOT NULL,
  -- json, not jsonb: the record is kept byte for byte as written, key order included.
  record           json        NOT NULL,
  -- CIDv1 (dag-cbor, sha2-256) of record; computed by the writer because Postgres cannot encode dag-cbor.
  cid              text        NOT NULL,
  author_id        text        NOT NULL,
  author_did       text,
  kind             text        GENERATED ALWAYS AS (CASE WHEN record -> 'reply' IS NULL THEN 'prompt' ELSE 'reply' END) STORED,
  parent_uri       text        GENERATED ALWAYS AS (record #>> '{reply,parent,uri}') STORED,
  root_uri         text        GENERATED ALWAYS AS (record #>> '{reply,root,uri}') STORED,
  embed_cid        text        GENERATED ALWAYS AS (record #>> '{embed,audio,ref,$link}') STORED,
  -- Set from the parent row by posts_derive_thread(): who may answer within this branch.
  root_author_id   text,
  branch_author_id text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, rkey),
  CONSTRAINT posts_reply_shape CHECK (
    (kind = 'prompt' AND parent_uri IS NULL AND root_uri IS NULL AND root_author_id IS NULL AND branch_author_id IS NULL)
    OR (kind = 'reply' AND parent_uri IS NOT NULL AND root_uri IS NOT NULL AND root_author_id IS NOT NULL AND branch_author_id IS NOT NULL)
  )
);

CREATE INDEX posts_by_author ON posts (app_id, author_id, rkey);
CREATE INDEX posts_by_root_author ON posts (app_id, root_author_id, rkey) WHERE kind = 'reply';
CREATE INDEX posts_by_parent ON posts (app_id, parent_uri, rkey) WHERE kind = 'reply';

-- A reply's thread facets come from its parent row: the root's author, and the responder who opened the branch
-- (the author of the reply to the prompt). A reply whose parent is missing gets NULLs and fails posts_reply_shape.
CREATE FUNCTION posts_derive_thread() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  parent posts%ROWTYPE;
BEGIN
  IF NEW.record -> 'reply' IS NOT NULL THEN
    SELECT * INTO parent FROM posts
     WHERE app_id = NEW.app_id AND rkey = split_part(NEW.record #>> '{reply,parent,uri}', '/', 5);
    IF FOUND THEN
      IF parent.kind = 'prompt' THEN
        NEW.root_author_id := parent.author_id;
        NEW.branch_author_id := NEW.author_id;
      ELSE
        NEW.root_author_id := parent.root_author_id;
        NEW.branch_author_id := parent.branch_author_id;
      END IF;
    ELSE
      NEW.root_author_id := NULL;
      NEW.branch_author_id := NULL;
    END IF;
  ELSE
    NEW.root_author_id := NULL;
    NEW.branch_author_id := NULL;
  END IF;
  RETURN NEW;
END;
$$;

CREATE TRIGGER posts_derive_thread BEFORE INSERT OR UPDATE OF record ON posts
  FOR EACH ROW EXECUTE FUNCTION posts_derive_thread();
