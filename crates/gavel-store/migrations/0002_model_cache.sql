-- Model answers cached by gavel-models' cache layer.
--
-- `key` is the hex SHA-256 of the canonical request (model id, every request field,
-- template hash, sample index): content-addressed, so an entry never goes stale; a
-- changed prompt is a new key. `response_json` is the serialized ChatResponse;
-- errors and refusals are never stored. `model` (the model id) and `created_at`
-- (fixed-width RFC 3339 UTC text) are for people and for pruning.

CREATE TABLE model_cache (
    key           TEXT PRIMARY KEY,
    model         TEXT NOT NULL,
    response_json TEXT NOT NULL,
    created_at    TEXT NOT NULL
);
