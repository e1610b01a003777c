-- How many executions a run planned (cases × targets × repeats, variants included),
-- set when the run is created, so that a report counts what never ran against the
-- gate. Null for runs stored before it was recorded.
ALTER TABLE runs ADD COLUMN planned BIGINT;
