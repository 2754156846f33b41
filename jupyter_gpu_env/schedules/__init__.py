"""Runs on a schedule that lives where the runs run (a SLURM chain, a CronJob; the server's own timer
for the local backend): the expression's timing, the records, the chain's tick and the service."""
