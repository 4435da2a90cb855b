"""A Django app goldboard puts first in the embedded Label Studio's apps (never imported by goldboard).

It lets a server start while the seed still migrates a new database
(:meth:`goldboard.annotate.server.EmbeddedServer.start`): with ``GOLDBOARD_WAIT_FOR_MIGRATION``
set, its ``ready()`` -- after every model is loaded, before any other app's ``ready()`` (some of
Label Studio's read the database) -- waits until the seed (:mod:`goldboard.annotate._lsboot`)
has created that file. Django's own start-up, the larger part of a server start, runs meanwhile.
"""

from __future__ import annotations

import os
import time

from django.apps import AppConfig

#: how long a server waits for the seed's migration (the seed's own time limit)
WAIT_LIMIT = 600.0


class WaitForMigration(AppConfig):
    name = "goldboard.annotate._lswait"
    label = "goldboard_wait"
    verbose_name = "goldboard: wait for the seed's migration"

    def ready(self) -> None:
        marker = os.environ.get("GOLDBOARD_WAIT_FOR_MIGRATION")
        end = time.monotonic() + WAIT_LIMIT
        while marker and not os.path.exists(marker) and time.monotonic() < end:
            time.sleep(0.1)
