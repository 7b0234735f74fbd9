"""The dashboard: the last 30 days at a glance, within the user's grants."""
