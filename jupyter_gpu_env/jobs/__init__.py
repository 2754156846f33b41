"""Jobs and sweeps, what users send: the store, the service and what a submission goes through; below,
sweeps/ and runner/ (what runs on the node). The batch systems are backends/'s; the features built on
jobs (schedules, pipelines, Dask clusters) are folders of their own above this one.

Kept empty of imports: the runner imports this package on compute nodes and must start fast.
"""
