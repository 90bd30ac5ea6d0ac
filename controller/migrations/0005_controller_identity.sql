-- Whose database this is: the CA fingerprint and grant public key of the controller that
-- first served from it. A controller (or a replica) with other keys refuses to start on it:
-- the agents enrolled here trust this CA and verify grants with this key.
CREATE TABLE controller_identity (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    ca_fingerprint TEXT NOT NULL,
    grant_public_key TEXT NOT NULL,
    recorded_at BIGINT NOT NULL
);
