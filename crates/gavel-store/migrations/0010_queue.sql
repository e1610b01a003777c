-- Scale-out (DESIGN.md §9): the suite a distributed run was started with, and the
-- queue of its executions that `gavel worker` processes claim.
--
-- A queue row is `queued`, `claimed` (by `worker` until `lease_until_ms`, epoch
-- milliseconds, renewed by heartbeats) or `done`. A claimed row whose lease expired
-- is claimed again; `attempts` counts the claims.

CREATE TABLE run_suites (
    run_id     TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    suite_json TEXT NOT NULL
);

CREATE TABLE queue (
    id             TEXT PRIMARY KEY,
    run_id         TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq            BIGINT NOT NULL,
    case_id        TEXT NOT NULL,
    target         TEXT NOT NULL,
    repeat_index   BIGINT NOT NULL,
    state          TEXT NOT NULL,
    worker         TEXT,
    lease_until_ms BIGINT,
    attempts       BIGINT NOT NULL,
    UNIQUE (run_id, case_id, target, repeat_index)
);

CREATE INDEX queue_state_seq ON queue (state, seq);
