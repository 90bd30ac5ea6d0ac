-- Replicas of one controller on one database. Each serving controller has a row with a
-- lease it renews; a row whose lease_expires_at (milliseconds, the database's clock) has
-- passed is a replica the others treat as dead. agent_owners says which replica holds each
-- agent's live stream: the newest stream's replica writes its row over the older one's.
CREATE TABLE controller_replicas (
    id TEXT PRIMARY KEY,
    cluster_address TEXT NOT NULL,
    gateway_address TEXT NOT NULL,
    version TEXT NOT NULL,
    started_at BIGINT NOT NULL,
    renewed_at BIGINT NOT NULL,
    lease_expires_at BIGINT NOT NULL,
    agents_held BIGINT NOT NULL,
    state TEXT NOT NULL
);

CREATE TABLE agent_owners (
    agent_id TEXT PRIMARY KEY,
    replica_id TEXT NOT NULL,
    conn BIGINT NOT NULL,
    since BIGINT NOT NULL
);

CREATE INDEX agent_owners_by_replica ON agent_owners (replica_id);

-- Which replica claimed an approved write's run: when that replica's lease lapses with the
-- run still `running`, the survivors record its outcome as unknown (it is never re-run).
ALTER TABLE approvals ADD COLUMN run_replica TEXT;
