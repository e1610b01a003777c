-- Who drives a run: one process at a time executes (or resumes) it, holding a
-- lease it renews (`driver_until_ms`, epoch milliseconds); a lease that expired
-- (its process died) may be taken over.
ALTER TABLE runs ADD COLUMN driver TEXT;
ALTER TABLE runs ADD COLUMN driver_until_ms BIGINT;
