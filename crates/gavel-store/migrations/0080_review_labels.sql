-- The web UI's review queue: pairwise labels and the executions labels name.
--
-- A pairwise label compares the execution of (run_id, case_id, target,
-- repeat_index), "A", with the execution of the same case at (pair_run_id,
-- pair_target, pair_repeat_index), "B"; `label` is `A`, `B` or `tie` in that
-- true order, whatever order the labeller was shown. `shown_swapped` is 1 when
-- B was shown first; `recheck_label` is the same labeller's label of the pair
-- shown again in the other order (true order too), for position consistency.
ALTER TABLE labels ADD COLUMN pair_run_id TEXT;
ALTER TABLE labels ADD COLUMN pair_target TEXT;
ALTER TABLE labels ADD COLUMN pair_repeat_index BIGINT;
ALTER TABLE labels ADD COLUMN shown_swapped BIGINT;
ALTER TABLE labels ADD COLUMN recheck_label TEXT;
-- The queue finds an execution's labels by its key, not by item id.
CREATE INDEX labels_execution ON labels (run_id, case_id, target, repeat_index);
