-- Findings: what patrol checks and Alertmanager alerts found. A finding is keyed by its check
-- and subject (a resource and the item in it: a mount point, a unit, an alert group's
-- fingerprint); scope is what the check ran on (a host whose containers it checked). While it is not resolved, a repeat updates it (last_seen, count) instead of
-- adding a row, and the partial unique index keeps it so across replicas. Times are unix
-- seconds.
CREATE TABLE findings (
    id TEXT PRIMARY KEY,
    check_name TEXT NOT NULL,
    subject TEXT NOT NULL,
    scope TEXT NOT NULL,
    resource_id TEXT,
    resource_name TEXT,
    severity TEXT NOT NULL,
    status TEXT NOT NULL,
    summary TEXT NOT NULL,
    evidence TEXT NOT NULL,
    first_seen BIGINT NOT NULL,
    last_seen BIGINT NOT NULL,
    count BIGINT NOT NULL,
    resolved_at BIGINT,
    acknowledged_by TEXT,
    snoozed_until BIGINT,
    investigation_session_id TEXT,
    investigation_status TEXT,
    investigation_answer TEXT,
    investigation_started_at BIGINT
);

CREATE UNIQUE INDEX findings_live ON findings (check_name, subject) WHERE status <> 'resolved';
CREATE INDEX findings_by_status ON findings (status, last_seen);
CREATE INDEX findings_by_scope ON findings (check_name, scope);

-- Notification channels made through the API (those of the configuration file are not
-- stored: the file stays their one home).
CREATE TABLE notify_channels (
    name TEXT PRIMARY KEY,
    body TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

-- Deliveries waiting to be sent, sent, or given up on. A replica claims a due row by
-- setting claimed_until; one that dies mid-send leaves a claim that lapses.
CREATE TABLE notify_outbox (
    id TEXT PRIMARY KEY,
    channel TEXT NOT NULL,
    event TEXT NOT NULL,
    body TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts BIGINT NOT NULL,
    next_attempt_at BIGINT NOT NULL,
    claimed_until BIGINT NOT NULL,
    last_error TEXT,
    created_at BIGINT NOT NULL,
    done_at BIGINT
);

CREATE INDEX notify_outbox_due ON notify_outbox (status, next_attempt_at);
