-- Case lifecycle: archive, delete and restore are versions too, so the history
-- says who changed what. `archived` 1: the case is kept but out of runs and
-- exports. `change_kind`: `delete`, `archive`, `unarchive` or `restore` (NULL: a
-- save or an import); `restored_from`: the version a restore copied.
ALTER TABLE case_versions ADD COLUMN archived BIGINT NOT NULL DEFAULT 0;
ALTER TABLE case_versions ADD COLUMN change_kind TEXT;
ALTER TABLE case_versions ADD COLUMN restored_from BIGINT;
