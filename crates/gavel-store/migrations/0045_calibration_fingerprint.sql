-- The judge a calibration run holds for: provider, model, base URL host, template
-- hashes, temperature, max_tokens, scale (a gavel_core::JudgeFingerprint as
-- JSON). NULL on runs stored before fingerprints: no suite can gate on those.
ALTER TABLE calibration_runs ADD COLUMN fingerprint_json TEXT;
