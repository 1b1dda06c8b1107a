"""What the panel and the Memory view say where a number is only a lower bound (a data-dependent size, nu23 D4) and
what a kernel call of several fused nodes writes in place (nu23 D5), in headless Chromium (exported page, offline)."""

import pytest

from inductor_lens.report.model import Report
from tests.report.test_derived import OPTIMIZER_PARAMS, _optimizer_step
from tests.views.test_html_export import _assert_clean, _open

pytestmark = pytest.mark.browser


def test_the_panel_of_an_optimizers_one_kernel_says_all_it_writes_in_place(tmp_path, offline_page):
    """The box of a compiled optimizer step's one kernel (a call of one fused node per parameter) said the first
    node's writes only ("Writes cls in place"); its panel says the whole call's, as Python words it."""
    c = _optimizer_step(OPTIMIZER_PARAMS)
    path = tmp_path / "opt.html"
    Report(torch_version="2.13.0", device="cpu", compiles=[c], title="opt").save_html(path)
    _open(offline_page, path)
    offline_page.locator('[data-view="fusion"] [data-node="op0"]').first.click()
    said = offline_page.locator('[data-role="in-place"]').inner_text()
    assert said == c.kernels[0].in_place[0], said
    assert said.startswith("Writes 6 parameters of your model in place (cls, pos, patch.weight and 3 more)"), said
    _assert_clean(offline_page)
