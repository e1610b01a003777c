-- What each execution spent (target and judge calls, US dollars; NULL when
-- nothing reported a cost), so that a run's spend is read from the store and
-- `--max-cost` holds across every worker of a distributed run.
ALTER TABLE executions ADD COLUMN cost_usd DOUBLE PRECISION;
