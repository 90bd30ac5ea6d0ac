-- The agent link: enrolled agents, join tokens and revocations.
-- Portable SQL (SQLite and PostgreSQL): TEXT, BIGINT, BOOLEAN; times are Unix seconds.

CREATE TABLE agents (
    id              TEXT PRIMARY KEY,
    hostname        TEXT NOT NULL,
    labels          TEXT NOT NULL DEFAULT '{}',
    cert_serial     TEXT NOT NULL,
    cert_expires_at BIGINT NOT NULL,
    version         TEXT NOT NULL DEFAULT '',
    read_only       BOOLEAN NOT NULL DEFAULT FALSE,
    last_seen       BIGINT,
    facts           TEXT,
    created_at      BIGINT NOT NULL,
    revoked_at      BIGINT
);

CREATE TABLE join_tokens (
    token_hash  TEXT PRIMARY KEY,
    id          TEXT NOT NULL,
    labels      TEXT NOT NULL DEFAULT '{}',
    uses_total  BIGINT NOT NULL,
    uses_left   BIGINT NOT NULL,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,
    revoked_at  BIGINT
);

CREATE INDEX join_tokens_by_id ON join_tokens (id);

-- kind is 'agent' (value: the agent id) or 'serial' (value: a certificate serial, hex).
CREATE TABLE revocations (
    kind        TEXT NOT NULL,
    value       TEXT NOT NULL,
    reason      TEXT NOT NULL DEFAULT '',
    revoked_at  BIGINT NOT NULL,
    PRIMARY KEY (kind, value)
);
