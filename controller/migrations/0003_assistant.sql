-- The assistant: what a session is allowed (control level), token usage, structured message
-- data (tool calls and results), and approvals that run once with a signed grant.

ALTER TABLE chat_sessions ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE chat_sessions ADD COLUMN control_level TEXT NOT NULL DEFAULT 'controlled';
ALTER TABLE chat_sessions ADD COLUMN input_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE chat_sessions ADD COLUMN output_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE chat_sessions ADD COLUMN updated_at BIGINT NOT NULL DEFAULT 0;

-- data: JSON (an assistant message's tool calls; a tool message's call id and name).
ALTER TABLE chat_messages ADD COLUMN data TEXT;
ALTER TABLE chat_messages ADD COLUMN seq BIGINT NOT NULL DEFAULT 0;

-- status gains 'withdrawn' (the turn that raised it was cancelled).
-- run_state: none (not run), running (claimed by one runner), done, unknown (the
-- controller stopped while it ran: never re-run on its own).
ALTER TABLE approvals ADD COLUMN tool_call_id TEXT;
ALTER TABLE approvals ADD COLUMN resource_id TEXT;
ALTER TABLE approvals ADD COLUMN timeout_s BIGINT NOT NULL DEFAULT 0;
ALTER TABLE approvals ADD COLUMN run_state TEXT NOT NULL DEFAULT 'none';
ALTER TABLE approvals ADD COLUMN exit_code BIGINT;
ALTER TABLE approvals ADD COLUMN outcome TEXT;
