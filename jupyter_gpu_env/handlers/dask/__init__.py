"""Dask clusters: their REST resource (`clusters.py`) and their dashboards through this server (`dashboard.py`)."""
