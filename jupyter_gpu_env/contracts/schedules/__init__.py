"""A schedule's folder and what it means, read alike by the server and a backend's tick: the document, the
plan a backend is told, the lock, and the one parser of schedule expressions."""
