-- Replies to one post are listed oldest first by record key, and a client pages on from the last key it saw. A reply
-- keyed (at its request's start) before one that committed first would land behind that cursor and never be seen
-- by a client paging forward. So a reply's insert locks its parent's row, which orders replies to one post by
-- commit, and is dropped (no row inserted) when a later-keyed reply to that post is already there: the writer then
-- keys it after that one (create-post.ts). The check runs after the lock, on a fresh snapshot (a volatile
-- function's every query takes one), so it sees the reply whose commit it waited for.
CREATE OR REPLACE FUNCTION posts_derive_thread() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  parent posts%ROWTYPE;
  parent_rkey text := split_part(NEW.record #>> '{reply,parent,uri}', '/', 5);
BEGIN
  IF NEW.record -> 'reply' IS NOT NULL THEN
    IF TG_OP = 'INSERT' THEN
      SELECT * INTO parent FROM posts WHERE app_id = NEW.app_id AND rkey = parent_rkey FOR UPDATE;
      IF EXISTS (SELECT 1 FROM posts r WHERE r.app_id = NEW.app_id AND r.kind = 'reply'
                    AND r.parent_uri = NEW.record #>> '{reply,parent,uri}' AND r.rkey > NEW.rkey) THEN
        RETURN NULL;
      END IF;
    ELSE
      SELECT * INTO parent FROM posts WHERE app_id = NEW.app_id AND rkey = parent_rkey;
    END IF;
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
