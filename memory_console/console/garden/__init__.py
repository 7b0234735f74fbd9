"""Gardening proposals and people's decisions about them."""
