-- What a turn was in its conversation: a follow-up to a clarifying question, the
-- branch it belongs to, the shape of its stream. JSON text, null for a plain turn.
ALTER TABLE turns ADD COLUMN conversation_json TEXT;
