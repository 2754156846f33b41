"""What the package asks of the operating system besides subprocesses (``proc.py``): files replaced in
one rename (``atomic``), Python work on one thread off the event loop (``offloop``), and processes
started ahead of need, waiting for their request (``spare``)."""
