"""Parameter sweeps: the runs a request makes (plan), their records (records), the sweep as a whole
(service), their folders (folders) and their results side by side (results)."""
