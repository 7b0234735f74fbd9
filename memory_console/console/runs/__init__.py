"""Runs, conversations and attribution: what an agent was given, and where it came from."""
