#!/usr/bin/env python3
"""Draws the loss curve of a training run (loss.csv) as an SVG picture. Standard library only.

The picture has a title, labelled axes with units, a legend, and the command that made it in
an XML comment; the same CSV always gives the same bytes. train.py calls draw() itself at
the end of a run; this script redraws a picture from a CSV.

Usage:
  /usr/bin/python3 training/plot_loss.py --csv data/loss.csv --out data/loss.svg
"""

import csv
import io
import math
import sys

from common import Parser, UsageError, check_outputs, run_main, read_input, write_output

W, H = 720, 440
LEFT, RIGHT, TOP, BOTTOM = 70, 20, 64, 60


def read_rows(path):
    """(tokens seen, train loss, held-out loss or None) per row of a loss.csv."""
    return parse_rows(read_input(path, "csv"), path)


def parse_rows(text, path):
    """read_rows() on the text of a loss.csv; `path` names it in errors."""
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    out = []
    for r in rows:
        try:
            held = r["heldout_loss"].strip()
            out.append((int(r["tokens"]), float(r["train_loss"]),
                        float(held) if held else None))
        except (KeyError, ValueError, TypeError, AttributeError):
            raise UsageError(f"'{path}' is not a loss.csv (columns step, tokens, train_loss, "
                             "heldout_loss, lr, seconds)")
        if not all(math.isfinite(v) for v in out[-1] if v is not None):
            raise UsageError(f"'{path}' row {len(out)}: a loss that is not a finite number "
                             f"({r['train_loss']}, {r['heldout_loss']}); the run diverged")
        if out[-1][0] < 0 or min(v for v in out[-1][1:] if v is not None) < 0:
            raise UsageError(f"'{path}' row {len(out)}: a negative token count or loss "
                             f"({r['tokens']}, {r['train_loss']}, {r['heldout_loss']})")
    if not out:
        raise UsageError(f"'{path}' has no rows")
    return out


def nice_step(span, count):
    """A round tick spacing (1, 2 or 5 times a power of ten) giving about `count` ticks."""
    raw = span / max(count, 1)
    mag = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    for m in (1, 2, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def fmt(v):
    return f"{v:.6g}"


def draw(rows, command, title="Training loss of the story model"):
    """The SVG text for rows of (tokens, train loss, held-out loss or None)."""
    xs = [r[0] / 1e6 for r in rows]
    ys = [r[1] for r in rows] + [r[2] for r in rows if r[2] is not None]
    x0, x1 = 0.0, max(xs) if max(xs) > 0 else 1.0
    y0, y1 = 0.0, max(ys) * 1.05 if max(ys) > 0 else 1.0  # all zero: still a scale
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM

    def px(x):
        return LEFT + (x - x0) / (x1 - x0) * pw

    def py(y):
        return TOP + ph - (y - y0) / (y1 - y0) * ph

    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           f"<!-- made by: {command.replace('--', '- -')} -->",
           f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W / 2}" y="24" text-anchor="middle" font-size="16">{title}</text>']
    step = nice_step(x1 - x0, 8)
    v = 0.0
    while v <= x1 + 1e-9:
        out.append(f'<line x1="{fmt(px(v))}" y1="{TOP}" x2="{fmt(px(v))}" y2="{TOP + ph}" '
                   'stroke="#e0e0e0"/>')
        out.append(f'<text x="{fmt(px(v))}" y="{TOP + ph + 16}" text-anchor="middle">'
                   f'{fmt(round(v, 6))}</text>')
        v += step
    step = nice_step(y1 - y0, 6)
    v = 0.0
    while v <= y1 + 1e-9:
        out.append(f'<line x1="{LEFT}" y1="{fmt(py(v))}" x2="{LEFT + pw}" y2="{fmt(py(v))}" '
                   'stroke="#e0e0e0"/>')
        out.append(f'<text x="{LEFT - 6}" y="{fmt(py(v) + 4)}" text-anchor="end">'
                   f'{fmt(round(v, 6))}</text>')
        v += step
    out.append(f'<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" '
               'stroke="black"/>')
    out.append(f'<text x="{LEFT + pw / 2}" y="{H - 18}" text-anchor="middle">'
               'tokens seen (millions)</text>')
    out.append(f'<text x="18" y="{TOP + ph / 2}" text-anchor="middle" '
               f'transform="rotate(-90 18 {TOP + ph / 2})">cross-entropy loss (nats per token)'
               '</text>')
    series = [("train windows (mean since the last point)", "#1f77b4",
               [(r[0] / 1e6, r[1]) for r in rows]),
              ("held-out stories (whole, float32)", "#d62728", [(r[0] / 1e6, r[2]) for r in rows if r[2] is not None])]
    for i, (label, color, pts) in enumerate(series):
        if pts:
            path = " ".join(f"{fmt(px(x))},{fmt(py(y))}" for x, y in pts)
            out.append(f'<polyline points="{path}" fill="none" stroke="{color}" '
                       'stroke-width="2"/>')
            for x, y in pts if color == "#d62728" else []:
                out.append(f'<circle cx="{fmt(px(x))}" cy="{fmt(py(y))}" r="3" '
                           f'fill="{color}"/>')
        # The legend sits in one row between the title and the plot, clear of the curves.
        ly = 48
        lx = LEFT + 10 + 330 * i
        out.append(f'<line x1="{lx}" y1="{ly - 4}" x2="{lx + 24}" y2="{ly - 4}" '
                   f'stroke="{color}" stroke-width="2"/>')
        out.append(f'<text x="{lx + 30}" y="{ly}">{label}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv):
    ap = Parser(description="Draw loss.csv as an SVG line chart.")
    ap.add_argument("--csv", required=True, help="loss.csv written by train.py")
    ap.add_argument("--out", required=True, help="SVG file to write")
    args = ap.parse_args(argv)
    check_outputs({"--out": args.out}, {"--csv": args.csv})
    svg = draw(read_rows(args.csv), "/usr/bin/python3 training/plot_loss.py " + " ".join(argv))
    write_output(args.out, svg)
    print(f"plot_loss: wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(run_main("plot_loss", main, sys.argv[1:]))
