"""Capture layer: the only part of inductor_lens that touches ``torch._*`` (in ``adapter``)."""
