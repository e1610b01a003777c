-- Human labels on executions (the web UI's labelling page), the ground truth that
-- judge calibration compares judges with. An execution is keyed as everywhere:
-- (run, case, target, repeat). A person may label an execution more than once;
-- every label is kept, the latest per person counts.
--
-- `label` is the person's status word (`pass` or `fail`); `score` is optional, on
-- 0..1; `who` names the person; `created_at` is RFC 3339 UTC text.

CREATE TABLE labels (
    id           TEXT PRIMARY KEY,
    run_id       TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    case_id      TEXT NOT NULL,
    target       TEXT NOT NULL,
    repeat_index BIGINT NOT NULL,
    label        TEXT NOT NULL,
    score        DOUBLE PRECISION,
    who          TEXT NOT NULL,
    note         TEXT,
    created_at   TEXT NOT NULL
);

CREATE INDEX labels_run ON labels (run_id, case_id, target, repeat_index);
