"""Schedules on Kubernetes: each is one batch/v1 CronJob (the pure builder in :mod:`.cronjob`, made,
changed, paused, deleted and read back by :class:`.cronjobs.CronJobs`), so its runs start while no
Jupyter server runs. Its CronJobs and the tick their pods run.
"""
