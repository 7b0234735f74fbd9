"""The ledger and access-log pages, their exports with proofs, and the chain check."""
