from django.apps import AppConfig


class MemoryConsoleConfig(AppConfig):
    name = "memory_console"
    verbose_name = "Memory console"
