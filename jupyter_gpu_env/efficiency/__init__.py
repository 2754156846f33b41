"""GPU efficiency: right-size advice from what runs measured, and idle GPUs enforced where the site wants it."""
