"""The memory page and what a person does to a memory there."""
