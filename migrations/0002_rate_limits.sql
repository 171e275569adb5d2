-- Rate limits: an exact sliding log per key, shared by every process through the database.
CREATE TABLE rate_limit_hits (
  key        text          PRIMARY KEY,
  -- Times of the admitted requests still inside the window, oldest first.
  hits       timestamptz[] NOT NULL,
  -- When the newest hit leaves its window: past it the row holds nothing and may be deleted.
  expires_at timestamptz   NOT NULL
);

CREATE INDEX rate_limit_hits_by_expiry ON rate_limit_hits (expires_at);

-- Takes one slot from every limiter in p_limiters (a JSON array of {key, lim, win} with win in ms), or from none:
-- a request denied by one limiter does not use up the others. Rows are locked in key order by
-- INSERT ... ON CONFLICT DO UPDATE, so concurrent callers serialise per key and never deadlock.
-- Time is clock_timestamp(), the database clock shared by all processes.
-- reset_ms: for a limiter with room, ms until its oldest hit leaves the window (a slot comes back)
-- and for a full one, ms until enough hits leave that one request fits (the Retry-After).
CREATE FUNCTION rate_limit_take(p_limiters json, p_prune_chance double precision DEFAULT 0.01)
RETURNS TABLE (key text, allowed boolean, remaining integer, reset_ms integer)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_now    timestamptz := clock_timestamp();
  v_keys   text[];
  v_limits integer[];
  v_wins   integer[];
  v_room   boolean[] := '{}';
  v_hits   timestamptz[];
  v_all    boolean := true;
  v_n      integer;
  v_first  timestamptz;
  i        integer;
BEGIN
  -- Occasionally drop rows whose every hit has left the window. SKIP LOCKED: never wait on a row in use.
  IF random() < p_prune_chance THEN
    DELETE FROM rate_limit_hits AS d
     WHERE d.key IN (SELECT s.key FROM rate_limit_hits AS s WHERE s.expires_at < v_now
                      LIMIT 1000 FOR UPDATE SKIP LOCKED);
  END IF;

  SELECT array_agg(t.key ORDER BY t.key), array_agg(t.lim ORDER BY t.key), array_agg(t.win ORDER BY t.key)
    INTO v_keys, v_limits, v_wins
    FROM json_to_recordset(p_limiters) AS t(key text, lim integer, win integer);

  -- Pass 1: lock each row (creating it if new), prune hits older than the window, and see whether it has room.
  FOR i IN 1 .. coalesce(array_length(v_keys, 1), 0) LOOP
    INSERT INTO rate_limit_hits AS r (key, hits, expires_at)
    VALUES (v_keys[i], '{}', v_now)
    ON CONFLICT ON CONSTRAINT rate_limit_hits_pkey DO UPDATE
      SET hits = ARRAY(SELECT h FROM unnest(r.hits) AS h
                        WHERE h > v_now - v_wins[i] * interval '1 millisecond' ORDER BY h)
    RETURNING r.hits INTO v_hits;
    v_room[i] := coalesce(array_length(v_hits, 1), 0) < v_limits[i];
    v_all := v_all AND v_room[i];
  END LOOP;

  -- Pass 2: record the hit on every limiter only when all of them had room, then report each one.
  FOR i IN 1 .. coalesce(array_length(v_keys, 1), 0) LOOP
    IF v_all THEN
      UPDATE rate_limit_hits AS r
         SET hits = r.hits || v_now, expires_at = v_now + v_wins[i] * interval '1 millisecond'
       WHERE r.key = v_keys[i]
      RETURNING r.hits INTO v_hits;
    ELSE
      SELECT r.hits INTO v_hits FROM rate_limit_hits AS r WHERE r.key = v_keys[i];
    END IF;
    v_n := coalesce(array_length(v_hits, 1), 0);
    v_first := v_hits[greatest(1, v_n - v_limits[i] + 1)];
    key := v_keys[i];
    allowed := v_room[i];
    remaining := greatest(v_limits[i] - v_n, 0);
    reset_ms := CASE WHEN v_first IS NULL THEN v_wins[i]
                     ELSE greatest(1, ceil(extract(epoch FROM v_first + v_wins[i] * interval '1 millisecond' - v_now) * 1000))::integer
                END;
    RETURN NEXT;
  END LOOP;
END
$$;
