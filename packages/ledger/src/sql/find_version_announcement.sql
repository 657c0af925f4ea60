-- find_version_announcement.sql
-- What workers announced about a version of a graph (register_worker.sql), live or not: whether
-- any served it, and whether one declared it may resume checkpoints of another version
-- (`info.resumes`: the graph's compatibility list). The upgrade verb asks before moving jobs.
-- Params: $1 graph, $2 version asked about (to), $3 version it would resume (from)
-- Returns: one row: announced, compatible, live (a live worker serves it now).
SELECT EXISTS (SELECT 1 FROM workers w WHERE w.info -> 'versions' ->> $1 = $2) AS announced,
       EXISTS (SELECT 1 FROM workers w WHERE w.info -> 'versions' ->> $1 = $2 AND w.info -> 'resumes' -> $1 ? $3) AS compatible,
       graph_version_served($1, $2) AS live;
