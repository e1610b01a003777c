-- Recording an execution takes the next sequence number of its run with
-- MAX(seq): without this index that is a scan of the run, quadratic over a run.
CREATE INDEX executions_run_seq ON executions (run_id, seq);
