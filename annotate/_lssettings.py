"""Django settings of the embedded Label Studio: Label Studio's own, plus goldboard's guard app.

The server's child environment sets ``DJANGO_SETTINGS_MODULE`` to this module
(:func:`goldboard.annotate.server._child_env`); see :mod:`goldboard.annotate._lsguard`.
Label Studio's settings read ``django.conf.settings`` while they are being imported
(Sentry set-up), which then finds *this* module half-imported: the base settings are
therefore loaded into it first.
"""

from core.settings.base import *  # noqa: F403  (Label Studio puts its package dir on sys.path)
from label_studio.core.settings.label_studio import *  # noqa: F403

# the wait first: its ready() runs before any Label Studio app's (some read the database)
INSTALLED_APPS = [
    "goldboard.annotate._lswait.WaitForMigration",
    *INSTALLED_APPS,  # noqa: F405
    "goldboard.annotate._lsguard.GoldboardGuardConfig",
]
# remembers the request being served: the guard app's write check needs its user
MIDDLEWARE = [*MIDDLEWARE, "goldboard.annotate._lsguard.RequestMiddleware"]  # noqa: F405
# files Label Studio saves through Django's storage (exports, uploads): owner-only, like the rest of
# the data dir (Django's default chmods them 0644 whatever the umask; README "Permissions")
FILE_UPLOAD_PERMISSIONS = 0o600
FILE_UPLOAD_DIRECTORY_PERMISSIONS = 0o700
