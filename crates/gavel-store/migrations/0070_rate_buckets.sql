-- Rate limits shared by every process on this store (N `gavel worker`s hold one
-- RPM/TPM): one GCRA bucket per limit and provider endpoint. `tat_us` is the
-- theoretical arrival time of the next cell, in epoch microseconds.
CREATE TABLE rate_buckets (
    key TEXT PRIMARY KEY,
    tat_us BIGINT NOT NULL
);
