-- Test cases stored in the database (`gavel import`, `gavel export`, the web UI),
-- versioned: every change to a case is a new row of `case_versions`, never an update.
--
-- A suite is kept as its source document: `shape` says how the file was written
-- (`suite`: a mapping with `cases`; `head`: a mapping without them, e.g. targets;
-- `list`: a bare list of cases; `case`: one case),
-- `head_json` holds every top-level key but `cases`, and each case is its own JSON
-- object, exactly as written. `case_json` NULL marks the case deleted in that version.

CREATE TABLE suites (
    name       TEXT PRIMARY KEY,
    shape      TEXT NOT NULL,
    head_json  TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    updated_by TEXT NOT NULL
);

CREATE TABLE case_versions (
    suite      TEXT NOT NULL REFERENCES suites (name) ON DELETE CASCADE,
    case_key   TEXT NOT NULL,
    version    BIGINT NOT NULL,
    position   BIGINT NOT NULL,
    case_json  TEXT,
    changed_by TEXT NOT NULL,
    changed_at TEXT NOT NULL,
    PRIMARY KEY (suite, case_key, version)
);

-- The exact case versions a run used.
CREATE TABLE run_case_versions (
    run_id   TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    suite    TEXT NOT NULL,
    case_key TEXT NOT NULL,
    version  BIGINT NOT NULL,
    PRIMARY KEY (run_id, suite, case_key)
);
