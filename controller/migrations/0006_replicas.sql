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

-- The replica where the approval was requested (a turn may be waiting there): an approval
-- decided through another replica runs there, where its output streams to the turn.
ALTER TABLE approvals ADD COLUMN waiter_replica TEXT;

-- The running chat turn of each session, on whichever replica: one at a time per session
-- across replicas; a cancel asked of another replica sets cancel_requested.
CREATE TABLE chat_turns (
    session_id TEXT PRIMARY KEY,
    replica_id TEXT NOT NULL,
    started_at BIGINT NOT NULL,
    cancel_requested BOOLEAN NOT NULL
);

-- A chat session's gate state (FSM, resolved resources, knowledge), stored when a turn
-- ends so that the next turn may run on any replica.
CREATE TABLE chat_session_state (
    session_id TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    saved_at BIGINT NOT NULL
);

-- Each agent's inventory as the replica holding its stream last saw it (a full report,
-- JSON), so that every replica lists and routes to every agent's resources.
CREATE TABLE agent_inventory (
    agent_id TEXT PRIMARY KEY,
    replica_id TEXT NOT NULL,
    body TEXT NOT NULL,
    version BIGINT NOT NULL
);
