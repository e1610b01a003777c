-- Executions that must run together (a pairwise check compares two targets'
-- answers to one case) form a unit: its first row is claimed like any other, and
-- the rest (`unit_head` = that row's id) are never claimed alone, but with it.
ALTER TABLE queue ADD COLUMN unit_head TEXT;
