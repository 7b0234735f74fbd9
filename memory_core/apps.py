from django.apps import AppConfig
from django.core.signals import setting_changed
from django.db.models.signals import post_migrate, pre_migrate


def _embedder_setting_changed(*, setting, **kwargs):
    if setting.startswith("MEMORY_EMBEDDER"):
        from memory_core.recall import providers

        providers.reset()


class MemoryCoreConfig(AppConfig):
    name = "memory_core"
    verbose_name = "Memory core"

    def ready(self):
        from memory_core.db.privileges import grant_after_migrate
        from memory_core.db.trigger_ignore import guard_during_migrate, install_after_migrate
        from memory_core.recall.embeddings import register_dumper

        # Vectors as binary real[] parameters, known to every connection made from now on.
        register_dumper()

        # Once per `migrate` (sender: this app), after every app's migrations have run.
        post_migrate.connect(grant_after_migrate, sender=self)
        # Only the owner lifts a trigger: pgtrigger's function is replaced as soon as a
        # migration re-creates it, and again at the end.
        pre_migrate.connect(guard_during_migrate, sender=self)
        post_migrate.connect(install_after_migrate, sender=self)
        # Tests switch embedders with override_settings.
        setting_changed.connect(_embedder_setting_changed)
