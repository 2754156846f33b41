"""Batch jobs: the job model's store, the backends, the runner and the service that ties them.

Kept empty of imports: the runner imports this package on compute nodes and must start fast.
"""
