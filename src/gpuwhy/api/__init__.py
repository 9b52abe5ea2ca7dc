"""The use cases behind the public API: :mod:`.classify` (``gpuwhy.classify``) and
:mod:`.measure` (``gpuwhy.measure``). The CLI calls the same functions."""
