-- Why a run failed (the harness broke, or its suite could not run), for people.
ALTER TABLE runs ADD COLUMN error TEXT;
