"""``python -m gpuwhy``: the same as the ``gpuwhy`` console script."""

from .cli.app import entry

entry()
