-- Web UI accounts (`gavel users add`, the admin's users page).
--
-- `users`: local accounts; `password_hash` is an argon2 PHC string, never a
-- password. `role` is `viewer`, `editor` or `admin`; a disabled account cannot
-- sign in and its sessions and API tokens stop working.
-- `user_sessions`: signed-in browsers, keyed by the SHA-256 of the session cookie
-- (the cookie itself is never stored); `expires_ms` is epoch milliseconds.
-- `api_tokens`: per-user tokens for scripts and CI, keyed by id, stored as the
-- SHA-256 of the token (shown once, when made).
CREATE TABLE users (
    name          TEXT PRIMARY KEY,
    role          TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    disabled      BIGINT NOT NULL DEFAULT 0,
    created_at    TEXT NOT NULL,
    created_by    TEXT NOT NULL
);

CREATE TABLE user_sessions (
    id_hash    TEXT PRIMARY KEY,
    user_name  TEXT NOT NULL REFERENCES users (name) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    expires_ms BIGINT NOT NULL
);

CREATE TABLE api_tokens (
    id         TEXT PRIMARY KEY,
    user_name  TEXT NOT NULL REFERENCES users (name) ON DELETE CASCADE,
    label      TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    created_by TEXT NOT NULL
);
