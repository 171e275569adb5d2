-- A row's expiry never moves earlier. A take reads its clock before it waits for a row's lock, so a take timed earlier
-- can write a row after one timed later (a request of a client IP held up on its actor's row while a later request of
-- that IP went through). It set the row's expiry from its own, earlier time, and a prune between the two expiries
-- deleted the row with the later hits still in their window: they no longer counted, and a burst got a second quota
-- within one window. Same answers otherwise; the one-argument form calls this one.
CREATE OR REPLACE FUNCTION rate_limit_take(p_limiters json, p_now timestamptz, p_prune_chance double precision DEFAULT 0.1)
RETURNS TABLE (key text, allowed boolean, remaining integer, reset_ms integer)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_now     timestamptz := p_now;
  v_keys    text[];
  v_limits  integer[];
  v_wins    integer[];
  -- Per limiter, from its row with this hit appended: how many hits, and the first one of the last `limit` of
  -- them with this hit (v_with) and without it (v_without), from which reset_ms follows.
  v_counts  integer[] := '{}';
  v_with    timestamptz[] := '{}';
  v_without timestamptz[] := '{}';
  v_hits    timestamptz[];
  v_all     boolean := true;
  v_n       integer;
  v_first   timestamptz;
  i         integer;
BEGIN
  IF random() < p_prune_chance THEN
    PERFORM rate_limit_prune(v_now);
  END IF;

  SELECT array_agg(t.key ORDER BY t.key), array_agg(t.lim ORDER BY t.key), array_agg(t.win ORDER BY t.key)
    INTO v_keys, v_limits, v_wins
    FROM json_to_recordset(p_limiters) AS t(key text, lim integer, win integer);

  -- Pass 1, one write per limiter: lock the row (creating it if new), prune hits older than the window and append
  -- this one. The limiter had room when the hits before this one were fewer than its limit.
  FOR i IN 1 .. coalesce(array_length(v_keys, 1), 0) LOOP
    INSERT INTO rate_limit_hits AS r (key, hits, expires_at)
    VALUES (v_keys[i], ARRAY[v_now], v_now + v_wins[i] * interval '1 millisecond')
    ON CONFLICT ON CONSTRAINT rate_limit_hits_pkey DO UPDATE
      SET hits = ARRAY(SELECT h FROM unnest(r.hits) AS h
                        WHERE h > v_now - v_wins[i] * interval '1 millisecond' ORDER BY h) || v_now,
          expires_at = greatest(r.expires_at, v_now + v_wins[i] * interval '1 millisecond')
    RETURNING r.hits INTO v_hits;
    v_n := cardinality(v_hits);
    v_counts[i] := v_n;
    v_with[i] := v_hits[greatest(1, v_n - v_limits[i] + 1)];
    v_without[i] := CASE WHEN v_n > 1 THEN v_hits[greatest(1, v_n - v_limits[i])] END;
    v_all := v_all AND v_n <= v_limits[i];
  END LOOP;

  -- A request one limiter refuses is counted by none: this hit, the last of each row (still locked by this
  -- transaction), comes off every row again. Their expires_at stays later than needed, which only delays a prune.
  IF NOT v_all THEN
    FOR i IN 1 .. coalesce(array_length(v_keys, 1), 0) LOOP
      UPDATE rate_limit_hits AS r SET hits = r.hits[1 : cardinality(r.hits) - 1] WHERE r.key = v_keys[i];
    END LOOP;
  END IF;

  -- Report each limiter as its row now stands.
  FOR i IN 1 .. coalesce(array_length(v_keys, 1), 0) LOOP
    v_n := CASE WHEN v_all THEN v_counts[i] ELSE v_counts[i] - 1 END;
    v_first := CASE WHEN v_all THEN v_with[i] ELSE v_without[i] END;
    key := v_keys[i];
    allowed := v_counts[i] <= v_limits[i];
    remaining := greatest(v_limits[i] - v_n, 0);
    reset_ms := CASE WHEN v_first IS NULL THEN v_wins[i]
                     ELSE greatest(1, ceil(extract(epoch FROM v_first + v_wins[i] * interval '1 millisecond' - v_now) * 1000))::integer
                END;
    RETURN NEXT;
  END LOOP;
END
$$;
