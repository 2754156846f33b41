"""A pipeline's folder and graph, read alike by the server and a node's runner."""
