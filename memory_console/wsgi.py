"""WSGI entry point (gunicorn serves this; see `manage.py serve`)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_console.settings")
application = get_wsgi_application()
