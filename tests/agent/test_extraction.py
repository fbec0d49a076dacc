"""Cell extraction from real-looking model replies."""

from __future__ import annotations

from spatialclaw.agent.extraction import extract_cell, strip_reasoning


def test_fenced_block_with_prose_around_it_is_the_cell():
    reply = "I will look at the first frame.\n```python\nshow(frames[0])\nprint(len(frames))\n```\nThen I measure."
    cell = extract_cell(reply)
    assert cell.code == "show(frames[0])\nprint(len(frames))"
    assert not cell.truncated and cell.ignored_blocks == 0


def test_think_section_is_removed_even_when_it_contains_code():
    reply = "<think>maybe ```python\nanswer('A')\n``` no</think>Measuring first.\n```python\nd = depth(frames[0])\n```"
    assert extract_cell(reply).code == "d = depth(frames[0])"


def test_lone_closing_think_tag_drops_everything_before_it():
    reply = "the server stripped the opening tag ```python\nx = 0\n```\n</think>\n```python\nx = 1\n```"
    assert extract_cell(reply).code == "x = 1"


def test_unclosed_think_means_no_code():
    cell = extract_cell("<think>I should compute ```python\nx = 1")
    assert cell.code is None and not cell.found


def test_unclosed_fence_of_a_truncated_reply_runs_to_the_end():
    cell = extract_cell("Computing.\n```python\nfor i in range(3):\n    print(i)\nprint('do")
    assert cell.code == "for i in range(3):\n    print(i)\nprint('do"
    assert cell.truncated


def test_only_the_first_python_block_runs_and_the_others_are_counted():
    cell = extract_cell("```python\na = 1\n```\ntext\n```py\nb = 2\n```\n```python\nc = 3\n```")
    assert cell.code == "a = 1"
    assert cell.ignored_blocks == 2


def test_untagged_block_counts_only_if_it_is_python():
    assert extract_cell("Output will be:\n```\n3 chairs, 2 tables\n```").code is None
    assert extract_cell("```\nx = 5\nprint(x)\n```").code == "x = 5\nprint(x)"


def test_tagged_python_block_wins_over_an_untagged_one_before_it():
    assert extract_cell("```\ny = 2\n```\n```python\nz = 3\n```").code == "z = 3"


def test_bare_code_without_fences_is_accepted_but_prose_is_not():
    assert extract_cell('answer("B")').code == 'answer("B")'
    assert extract_cell("The answer is B.").code is None
    assert extract_cell("B").code is None


def test_tilde_fences_and_other_language_tags():
    assert extract_cell("~~~python\nprint(1)\n~~~").code == "print(1)"
    assert extract_cell('```json\n{"a": 1}\n```').code is None


def test_strip_reasoning_handles_other_tag_names():
    assert strip_reasoning("<thinking>x</thinking>visible") == "visible"
    assert strip_reasoning("<reasoning>x</reasoning> shown ") == "shown"


def test_a_closing_fence_glued_to_the_last_code_line_still_closes_the_block():
    cell = extract_cell("```python\nx = 1\nprint(x)```\nThat prints 1.")
    assert cell.code == "x = 1\nprint(x)" and not cell.truncated
