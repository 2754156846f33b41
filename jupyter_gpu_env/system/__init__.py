"""What the package asks of the operating system besides subprocesses (``proc.py``): files replaced in
one rename (``atomic``), Python work on one thread off the event loop (``offloop``), processes
started ahead of need, waiting for their request (``spare``), and the child end of a tether, a command
ended with all it started when its server dies (``tether``)."""
