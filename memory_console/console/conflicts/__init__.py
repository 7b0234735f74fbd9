"""The conflicts page and its inline decisions."""
