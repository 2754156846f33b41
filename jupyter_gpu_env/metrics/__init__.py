"""The site's view through Prometheus: the extension's series in Jupyter Server's own registry, served by
its ``/metrics`` — jobs by state, GPU-seconds allocated and used, energy, idle GPU time and queue waits
from the job records (the usage ledger), and the GPU panel's live readings.

Jupyter Server renders ``/metrics`` on its event loop, so nothing here reads the database while it does:
a timer reads the ledger into a snapshot on a connection and thread of its own (``records.py``,
``service.py``), and the collector (``collector.py``) only turns that snapshot and the sampler's latest
sample into metric families.
"""
