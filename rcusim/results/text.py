"""How results are printed: plain-text tables, numbers as cells and metrics as labelled
lines no wider than a terminal."""

from __future__ import annotations

import numpy as np

#: Widest line of :meth:`~rcusim.results.result.Result.table` and of
#: :meth:`~rcusim.results.result.Result.report_text`: a terminal's.
LINE_WIDTH = 100

#: Width of the labels of :meth:`~rcusim.results.result.Result.report_text`'s metric lines.
LABEL_WIDTH = 26


def items(metric: dict, prefix: str = "") -> list[str]:
    """A nested metric as "key value" items, nested keys dotted (``utilisation.max 0.0017``)."""
    out = []
    for key, value in metric.items():
        if isinstance(value, dict):
            out += items(value, f"{prefix}{key}.")
        else:
            out.append(f"{prefix}{key} {value}")
    return out


def metric_lines(label: str, items: list[str]) -> list[str]:
    """`label`, then `items` two spaces apart in lines of at most LINE_WIDTH characters,
    each further line's items under the first line's."""
    lines = [[]]
    for item in items:
        if lines[-1] and len("  ".join(lines[-1] + [item])) > LINE_WIDTH - LABEL_WIDTH:
            lines.append([])
        lines[-1].append(item)
    return [f"{label if i == 0 else '':<{LABEL_WIDTH}}" + "  ".join(line) for i, line in enumerate(lines)]


def text_table(header: list[str], body: list[list[str]], groups: list[list[int]] = (),
               width: int | None = None) -> str:
    """Rows of cells as a plain-text table, the first column left-aligned and the others right-aligned.

    A table wider than `width` characters (None: no limit) is cut into blocks, one under the
    other: each has the columns that are in none of the `groups` of column indices, and as many
    of the groups, in order, as fit (at least one); within a block the columns keep their order.
    """
    widths = [max(len(r[i]) for r in [header] + body) for i in range(len(header))]
    fixed = set(range(len(header))).difference(*groups)

    def columns(block):
        return sorted(fixed.union(*block))

    def span(block):
        return sum(widths[c] + 2 for c in columns(block)) - 2

    blocks = [[]]
    for group in groups:
        if blocks[-1] and width is not None and span(blocks[-1] + [group]) > width:
            blocks.append([])
        blocks[-1].append(group)

    def line(cells, cols):
        return "  ".join([cells[cols[0]].ljust(widths[cols[0]])] + [cells[c].rjust(widths[c]) for c in cols[1:]])

    out = []
    for block in blocks:
        cols = columns(block)
        out += [""] if out else []
        out += [line(header, cols), "  ".join("-" * widths[c] for c in cols)]
        out += [line(r, cols) for r in body]
    return "\n".join(out)


def fmt(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    return f"{float(value):.3f}"
