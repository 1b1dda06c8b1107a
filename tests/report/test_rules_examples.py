"""The examples in ``report/rules.py``'s docstrings are its contract (the words a view shows, decided once in
Python): each one runs here, so a change of a rule that breaks its own example fails."""

import doctest

from inductor_lens.report import rules


def test_every_example_in_the_rules_holds():
    result = doctest.testmod(rules, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted >= 13  # the examples are found (a docstring turned raw or moved would drop them)


def test_a_frame_dynamo_gave_up_on_is_summed_up_by_its_reason_not_its_header():
    """An ``nn.GRU`` under ``torch.compile`` (torch 2.13): dynamo falls back to eager for the whole frame, and the
    reason opens with a header that ends in a colon. The summary was that header; it is the reason after it, and that
    the whole frame ran eagerly (no graph on either side of the break, as the Source view's mark would suggest)."""
    reason = (
        "Failed to handle graph break gracefully. Skipping the function and falling back to eager. Graph break "
        "encountered:\n\nAttempted to wrap RNN, GRU, or LSTM\n  Explanation: Dynamo does not support RNN, GRU, or "
        "LSTM.\n  Hint: Set torch._dynamo.config.allow_rnn=True to enable experimental support for RNN, GRU, and LSTM"
    )
    summary = "Attempted to wrap RNN, GRU, or LSTM (dynamo skipped the whole frame: it ran eagerly)"
    assert rules.break_summary(reason) == summary


def test_every_example_in_the_module_view_holds():
    from inductor_lens.report import modules

    result = doctest.testmod(modules, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted >= 3


def test_every_example_in_the_memory_analysis_holds():
    """``analysis/memory.py``'s examples (the storage a strided tensor spans, the bytes an output code allocates) run
    too: one of them had been written so that it could not be read (a newline in its string)."""
    from inductor_lens.analysis import memory

    result = doctest.testmod(memory, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted >= 3
