-- gavel store schema, portable across SQLite and PostgreSQL.
--
-- Append-only: never edit a migration once released; add a new file instead.
-- Portable types only (TEXT, BIGINT, DOUBLE PRECISION). Ids are UUIDv7 text, times
-- are fixed-width RFC 3339 UTC text (sorts as text), JSON is text.
-- Every foreign key leads a primary key or unique constraint, which indexes it.

CREATE TABLE runs (
    id          TEXT PRIMARY KEY,
    suite       TEXT NOT NULL,
    status      TEXT NOT NULL,
    started_at  TEXT NOT NULL,
    finished_at TEXT,
    config_json TEXT NOT NULL
);

CREATE INDEX runs_started_at ON runs (started_at);

-- The exact cases a run used, in suite order.
CREATE TABLE run_cases (
    run_id    TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq       BIGINT NOT NULL,
    case_id   TEXT NOT NULL,
    source    TEXT NOT NULL,
    case_json TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);

-- One case against one target, one repeat.
CREATE TABLE executions (
    id           TEXT PRIMARY KEY,
    run_id       TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq          BIGINT NOT NULL,
    case_id      TEXT NOT NULL,
    case_name    TEXT NOT NULL,
    target       TEXT NOT NULL,
    repeat_index BIGINT NOT NULL,
    tags_json    TEXT NOT NULL,
    status       TEXT NOT NULL,
    score        DOUBLE PRECISION,
    reason       TEXT,
    started_at   TEXT NOT NULL,
    duration_ms  BIGINT NOT NULL,
    session_id   TEXT NOT NULL,
    UNIQUE (run_id, case_id, target, repeat_index)
);

CREATE TABLE turns (
    execution_id  TEXT NOT NULL REFERENCES executions (id) ON DELETE CASCADE,
    seq           BIGINT NOT NULL,
    round         BIGINT NOT NULL,
    input         TEXT NOT NULL,
    output        TEXT NOT NULL,
    response_json TEXT,
    latency_ms    BIGINT NOT NULL,
    usage_json    TEXT,
    failure_json  TEXT,
    PRIMARY KEY (execution_id, seq)
);

CREATE TABLE tool_calls (
    execution_id   TEXT NOT NULL,
    turn_seq       BIGINT NOT NULL,
    seq            BIGINT NOT NULL,
    name           TEXT NOT NULL,
    arguments_json TEXT NOT NULL,
    result_json    TEXT,
    PRIMARY KEY (execution_id, turn_seq, seq),
    FOREIGN KEY (execution_id, turn_seq) REFERENCES turns (execution_id, seq) ON DELETE CASCADE
);

CREATE TABLE verdicts (
    execution_id  TEXT NOT NULL REFERENCES executions (id) ON DELETE CASCADE,
    seq           BIGINT NOT NULL,
    round         BIGINT,
    check_name    TEXT NOT NULL,
    kind          TEXT NOT NULL,
    status        TEXT NOT NULL,
    score         DOUBLE PRECISION,
    threshold     DOUBLE PRECISION,
    reason        TEXT NOT NULL,
    evidence_json TEXT,
    cost_usd      DOUBLE PRECISION,
    PRIMARY KEY (execution_id, seq)
);
