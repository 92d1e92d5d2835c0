"""The book's report layer: figures, tables, provenance, notebook execution and rendering.

Imports the scoring and results layers only (no torch, no images):

* :mod:`.style` -- palette and sizes; :mod:`.plots` -- the figures;
  :mod:`.tables` -- table display; :mod:`.summaries` -- curves only the book draws;
* :mod:`.grammar` -- numbers in words; :mod:`.sentences` -- each chapter's sentences;
* :mod:`.banner` and :mod:`.context` -- what every page starts from;
* :mod:`.notebooks` -- papermill execution behind a cache;
  :mod:`.book` -- staging and ``jupyter-book build``.
"""
