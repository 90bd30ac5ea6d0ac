-- Controller state: API tokens, assistant chats, approvals, the audit chain and notes.
-- Portable SQL (SQLite and PostgreSQL): TEXT, BIGINT; times are Unix seconds.

-- Bearer tokens for the HTTP API, by SHA-256 (hex). role: viewer, operator or admin.
CREATE TABLE api_tokens (
    id          TEXT PRIMARY KEY,
    token_hash  TEXT NOT NULL UNIQUE,
    name        TEXT NOT NULL,
    role        TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    last_used   BIGINT,
    revoked_at  BIGINT
);

CREATE TABLE chat_sessions (
    id          TEXT PRIMARY KEY,
    title       TEXT NOT NULL DEFAULT '',
    created_at  BIGINT NOT NULL
);

CREATE TABLE chat_messages (
    id          TEXT PRIMARY KEY,
    session_id  TEXT NOT NULL REFERENCES chat_sessions (id) ON DELETE CASCADE,
    role        TEXT NOT NULL,
    content     TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);

CREATE INDEX chat_messages_by_session ON chat_messages (session_id, created_at);

-- status: pending, approved, denied (expired is derived from expires_at for pending rows).
CREATE TABLE approvals (
    id          TEXT PRIMARY KEY,
    session_id  TEXT,
    command     TEXT NOT NULL,
    target      TEXT,
    agent       TEXT,
    risk        TEXT NOT NULL,
    reasons     TEXT NOT NULL DEFAULT '[]',
    diff        TEXT,
    created_by  TEXT NOT NULL,
    decided_by  TEXT,
    decision    TEXT,
    reason      TEXT,
    created_at  BIGINT NOT NULL,
    decided_at  BIGINT,
    expires_at  BIGINT NOT NULL,
    status      TEXT NOT NULL DEFAULT 'pending'
);

CREATE INDEX approvals_by_status ON approvals (status, created_at);

-- Append-only hash chain: hash = SHA-256 over the canonical encoding of the row and
-- prev_hash (see src/audit). at is Unix seconds.
CREATE TABLE audit (
    seq         BIGINT PRIMARY KEY,
    prev_hash   TEXT NOT NULL,
    hash        TEXT NOT NULL,
    actor       TEXT NOT NULL,
    action      TEXT NOT NULL,
    agent       TEXT,
    target      TEXT,
    command     TEXT,
    approval_id TEXT,
    outcome     TEXT NOT NULL,
    exit_code   BIGINT,
    bytes       BIGINT,
    at          BIGINT NOT NULL
);

CREATE TABLE knowledge_notes (
    id          TEXT PRIMARY KEY,
    scope       TEXT NOT NULL,
    key         TEXT NOT NULL,
    value       TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);

CREATE INDEX knowledge_notes_by_scope ON knowledge_notes (scope, key);
