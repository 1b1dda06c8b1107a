"""The output-code scans that work with ``str`` methods, indexes and the few characters that matter find exactly
what the patterns and character loops they replace find (``capturing/parse.py``), on recorded output code (CPU
and Triton) and on random text made of the characters those scans care about. No torch."""

from __future__ import annotations

import random
import re

import pytest

import inductor_lens
from inductor_lens.capturing import parse
from tests._raw import FIXTURES, load_raw


def _codes() -> list[str]:
    codes = [g.output_code for name in ("training", "break_recompile") for g in load_raw(name).graphs]
    for name in ("gpu_training.json", "gpu_max_autotune.json"):
        codes += [c.output_code for c in inductor_lens.load(FIXTURES / name).compiles]
    assert len(codes) >= 6 and all(codes)
    return codes


@pytest.fixture(scope="module")
def codes():
    return _codes()


def _random_texts(alphabet: list[str], n: int, longest: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, longest))) for _ in range(n)]


# -- the definitions: what each scan did before it was made faster ---------------------------------------


def _split_args_by_character(text: str) -> list[str]:
    parts, depth, cur, quote = [], 0, [], ""
    for ch in text:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = ""
            continue
        if ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def _matching_by_character(code: str, start: int, open_: str, close: str) -> int:
    depth = 0
    for i in range(start, len(code)):
        if code[i] == open_:
            depth += 1
        elif code[i] == close:
            depth -= 1
            if depth == 0:
                return i
    return -1


def _call_lines_by_pattern(lines: list[str], callee: str) -> list[str]:
    pat = re.compile(r"(?:^|[^\w.])" + re.escape(callee) + r"(?:\.run)?\(")
    return [ln.strip() for ln in lines if pat.search(ln)]


_TRIPLE = re.compile(r"('''|\"\"\").*?\1", re.S)


# -- the scans -----------------------------------------------------------------------------------------


def test_split_args_and_bracket_matching_agree_with_the_character_loops(codes):
    texts = _random_texts(list("ab_.(),[]{}'\" 0\t"), 20000, 30, seed=1)
    texts += [ln for code in codes for ln in code.splitlines()]
    for text in texts:
        assert parse.split_args(text) == _split_args_by_character(text), text
        for start in range(min(len(text), 4)):
            for pair in ("()", "{}"):
                assert parse._matching(text, start, *pair) == _matching_by_character(text, start, *pair), text


def test_call_lines_from_the_index_are_the_lines_the_pattern_finds(codes):
    for code in codes:
        layouts = parse.OutputCodeLayouts(code)
        names = set(re.findall(r"[\w.]+", layouts.code)) | {"", ".", "a(", "run"}
        for callee in sorted(names):
            assert layouts.call_lines(callee) == _call_lines_by_pattern(layouts.lines, callee), callee
    rng = random.Random(2)
    for _ in range(2000):
        lines = _random_texts(list("ab_.( )0") + ["run", ".run("], 6, 12, seed=rng.random())
        layouts = parse.OutputCodeLayouts("\n".join(lines))
        for callee in ("a", "ab", "a.b", "b_", "a.run", "run", "_", "a0", "."):
            assert layouts.call_lines(callee) == _call_lines_by_pattern(layouts.lines, callee), (lines, callee)


def test_lines_naming_a_buffer_are_the_lines_where_it_is_a_whole_word(codes):
    lines = [ln for code in codes[:2] for ln in code.splitlines()]
    names = ["buf0", "buf1", "arg0_1", "primals_1", "x", "", "buf1.x", "é"]
    rng = random.Random(3)
    for _ in range(3000):
        some = _random_texts(list("ab_1.( )é,"), 5, 10, seed=rng.random())
        name = _random_texts(list("ab_1.é"), 1, 3, seed=rng.random())[0]
        word = re.compile(r"\b" + re.escape(name) + r"\b")
        assert parse.lines_naming(some, name, {}) == [ln for ln in some if word.search(ln)], (some, name)
    for name in names:
        word = re.compile(r"\b" + re.escape(name) + r"\b")
        assert parse.lines_naming(lines, name, {}) == [ln for ln in lines if word.search(ln)], name


def test_triple_quoted_strings_are_removed_as_the_pattern_removes_them(codes):
    for text in _random_texts(["'", '"', "a", "\n", "'''", '"""'], 50000, 14, seed=4) + codes:
        assert parse.without_triple_quoted(text) == _TRIPLE.sub("''", text), text
    assert parse.without_triple_quoted("k = '''src''' + \"\"\"x\"\"\" '''open") == "k = '' + '' '''open"


def test_the_parenthesis_of_a_call_is_where_the_pattern_finds_it(codes):
    lines = [ln for code in codes for ln in code.splitlines() if "(" in ln]
    texts = _random_texts(list("ab.(") + [".run(", "run", "b.run"], 20000, 10, seed=5)
    for line in lines[:3000] + texts:
        for callee in {*re.findall(r"[\w.]+", line)[:3], "", "a", "b", "a.b", "run"}:
            m = re.search(re.escape(callee) + r"(?:\.run)?\(", line)
            assert parse._call_paren(line, callee) == (m.end() - 1 if m else -1), (line, callee)
