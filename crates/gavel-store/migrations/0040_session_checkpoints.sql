-- Conversation state of targets that gavel itself runs (the mcp-agent target),
-- saved after every turn so that a revival (close the session, reopen it with the
-- same id) continues the same conversation.
--
-- `target` is the target's name, `session_id` the session's id; `state_json` is the
-- target's own serialized state (opaque to the store); `updated_at` is fixed-width
-- RFC 3339 UTC text.

CREATE TABLE session_checkpoints (
    target     TEXT NOT NULL,
    session_id TEXT NOT NULL,
    state_json TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (target, session_id)
);
