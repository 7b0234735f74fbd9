"""The synthetic organisation's shape for each size.

Every size keeps the same chain shape (an actor's own notes, one team, one tenant, global:
about 540 applicable rows per chain at the full sizes) and scales the number of tenants,
so a turn at 1m reads as many rows as a turn at 10k and only the store around it grows.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Size:
    name: str
    tenants: int
    teams_per_tenant: int
    actors_per_tenant: int
    tenant_policies: int
    team_policies: int
    global_policies: int
    memories: int  # every row, retired versions included
    requests: int  # measured requests per operation
    warmup: int  # unmeasured requests per operation first

    @property
    def actors(self) -> int:
        return self.tenants * self.actors_per_tenant


SIZES = {
    # Hidden from --help: the smoke test's size, a few hundred memories.
    "tiny": Size("tiny", 2, 2, 5, 20, 8, 20, 400, requests=12, warmup=3),
    "10k": Size("10k", 2, 5, 50, 200, 50, 200, 10_000, requests=300, warmup=30),
    "100k": Size("100k", 20, 5, 50, 200, 50, 200, 100_000, requests=1000, warmup=100),
    "1m": Size("1m", 200, 5, 50, 200, 50, 200, 1_000_000, requests=1000, warmup=100),
}
PUBLIC_SIZES = ["10k", "100k", "1m"]
