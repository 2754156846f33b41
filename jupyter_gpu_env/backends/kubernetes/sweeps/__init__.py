"""A sweep on Kubernetes: one Indexed Job, its pure builder (``indexed.py``) and its submission (``jobs.py``)."""
