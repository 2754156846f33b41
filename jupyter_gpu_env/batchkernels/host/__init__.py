"""The kernel host: the main process of a batch kernel's job on its node."""
