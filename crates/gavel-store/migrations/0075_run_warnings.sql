-- Warnings about a run that did not change its results (an OpenTelemetry
-- export that failed), one a line, for people; NULL when there are none.
ALTER TABLE runs ADD COLUMN warnings TEXT;
