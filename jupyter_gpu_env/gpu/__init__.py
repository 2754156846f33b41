"""GPU and host resource sampling."""
