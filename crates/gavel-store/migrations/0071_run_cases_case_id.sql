-- A report reads a run's executions case by case in snapshot order: finding a
-- case id's first position in the snapshot (and the executions whose case is
-- not in it) looks cases up by id.
CREATE INDEX run_cases_case_id ON run_cases (run_id, case_id, seq);
