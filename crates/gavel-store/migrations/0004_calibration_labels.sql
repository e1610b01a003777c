-- Calibration of judges against human labels.
--
-- `labels`: one person's label of one item of a label set; the web UI writes them.
-- An item is a stored execution (run_id, case_id, target, repeat_index set) or an
-- external one (those NULL). Labelling an item again replaces the earlier label.
-- `label` is categorical (pass/fail, A/B/tie), `score` ordinal (Likert).
CREATE TABLE labels (
    label_set    TEXT NOT NULL,
    item_id      TEXT NOT NULL,
    labeller     TEXT NOT NULL,
    run_id       TEXT,
    case_id      TEXT,
    target       TEXT,
    repeat_index BIGINT,
    label        TEXT,
    score        DOUBLE PRECISION,
    note         TEXT,
    created_at   TEXT NOT NULL,
    PRIMARY KEY (label_set, item_id, labeller)
);

-- One judge over one labelled set. `fit_to_gate` is 1 when agreement >= 80%.
-- `report_json` holds the full report (statistics, confusion matrix, items).
CREATE TABLE calibration_runs (
    id          TEXT PRIMARY KEY,
    created_at  TEXT NOT NULL,
    dataset     TEXT NOT NULL,
    judge       TEXT NOT NULL,
    items       BIGINT NOT NULL,
    judged      BIGINT NOT NULL,
    agreement   DOUBLE PRECISION,
    kappa       DOUBLE PRECISION,
    fit_to_gate BIGINT NOT NULL,
    report_json TEXT NOT NULL
);
