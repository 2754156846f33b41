"""Environments made from a file: the file's parser (`specfile`) and the environments made from it
(`environments`)."""
