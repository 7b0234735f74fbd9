from django.apps import AppConfig
from django.db.models.signals import post_migrate


class MemoryCoreConfig(AppConfig):
    name = "memory_core"
    verbose_name = "Memory core"

    def ready(self):
        from memory_core.privileges import grant_after_migrate

        # Once per `migrate` (sender: this app), after every app's migrations have run.
        post_migrate.connect(grant_after_migrate, sender=self)
