-- Sentence embeddings cached by gavel-embed's batcher (the `similar` check).
--
-- Keyed by the hex SHA-256 of the text and the embedding model's name: a text
-- embedded once is never embedded again by the same model. `vector` is the
-- vector's little-endian f32 bytes as lowercase hex (the Any driver and both
-- engines share TEXT); `dimensions` its length, checked on read. `created_at` is
-- fixed-width RFC 3339 UTC text, for pruning.

CREATE TABLE embedding_cache (
    text_hash  TEXT NOT NULL,
    model      TEXT NOT NULL,
    dimensions INTEGER NOT NULL,
    vector     TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (text_hash, model)
);
