-- What a finished run came to (its counts and gate), decided once by the
-- session and read back by the pages that list and show runs instead of
-- folding every execution on each load. `stamp` is what it was decided from
-- (status, end time, executions recorded and the last one's sequence): a
-- decision whose stamp no longer matches the run is decided again.
CREATE TABLE run_decisions (
    run_id   TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    stamp    TEXT NOT NULL,
    decision TEXT NOT NULL
);
