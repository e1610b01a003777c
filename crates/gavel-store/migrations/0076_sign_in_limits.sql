-- Sign-in throttling and API token expiry (the web UI's `/login`, `gavel users`).
--
-- `sign_in_failures`: failed sign-ins counted per subject, `kind` `account` (the
-- name typed, whether or not such an account exists) or `address` (the client's
-- IP address). `last_ms` is the latest failure and `blocked_until_ms` the time
-- before which the subject's sign-ins are refused without checking a password
-- (a back-off, or a lock once the count reaches the limit), epoch milliseconds.
-- A successful sign-in or an admin (`gavel users unlock`) deletes the row.
--
-- `api_tokens.expires_ms`: when a token stops working, epoch milliseconds.
-- Tokens made before this column existed have none; `gavel serve` gives them the
-- default lifetime from its next start, and until then they are refused.
CREATE TABLE sign_in_failures (
    kind             TEXT NOT NULL,
    subject          TEXT NOT NULL,
    failures         BIGINT NOT NULL,
    last_ms          BIGINT NOT NULL,
    blocked_until_ms BIGINT NOT NULL,
    PRIMARY KEY (kind, subject)
);

ALTER TABLE api_tokens ADD COLUMN expires_ms BIGINT;
