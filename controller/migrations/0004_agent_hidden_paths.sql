-- Paths an admin added, per agent, to what that agent's reads never see (the agent adds
-- them to its own list; they never remove from it). A JSON array of patterns.
ALTER TABLE agents ADD COLUMN hidden_paths TEXT NOT NULL DEFAULT '[]';
