-- Who started a run from the web UI or its API (the signed-in user); NULL for
-- runs started elsewhere.
ALTER TABLE runs ADD COLUMN started_by TEXT;
