"""Where the SQL time of test runs goes: every statement in the dbt logs under a directory (a
pytest --basetemp, a project's logs/), grouped by kind of statement, longest first.

    .venv/bin/python scripts/sql_time.py build/some-basetemp [--top 30]

A statement's time is from the line that sends it to the next statement of the same node: on the
session method a query's rows are fetched after dbt logs "SQL status", so the status line's time
leaves the query itself out. A kind is the statement's first words with its tables named by what
they are (`<table>`, or the package's scratch objects by their `__dbt_mj_` suffix), so the same
statement of every model and run falls into one row. pytest's `*current` links are skipped: they
point at directories read already.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

# A log entry: its time, level and thread, then its message, which may run on over several lines.
ENTRY = re.compile(r"^(\d\d):(\d\d):(\d\d\.\d+) \[\w+ *\] \[[^\]\n]*\]: (.*)", re.S)
# A line that ends the previous statement's time: the next statement, or the node's end.
SENDS = ("On model.", "On test.", "On seed.", "On snapshot.")
NODE_BOUNDARY = ("Began running node", "Finished running node")


def statement_kind(sql: str) -> str:
    """The first four words of `sql`, comments and case aside, tables named by what they are."""
    text = re.sub(r"/\*.*?\*/", " ", sql, flags=re.S)
    words = re.sub(r"\s+", " ", text).strip().lower().split(" ")[:4]
    named = []
    for word in words:
        bare = word.strip("`")
        scratch = re.search(r"__dbt_mj_(\w+?)(_\d+)?$", bare)
        if scratch:
            named.append(f"*__dbt_mj_{scratch.group(1)}")
        elif re.fullmatch(r"[a-z_]\w*(\.[a-z_]\w*)+", bare):
            named.append("<table>")
        else:
            named.append(word)
    return " ".join(named)


def statement_times(log: str) -> list[tuple[str, float]]:
    """(kind, seconds) of each statement in one dbt log's text."""
    times: list[tuple[str, float]] = []
    sent: tuple[str, float] | None = None
    for entry in re.split(r"\n(?=\d\d:\d\d:\d\d\.\d+ )", log):
        match = ENTRY.match(entry)
        if not match:
            continue
        hours, minutes, seconds, message = match.groups()
        at = int(hours) * 3600 + int(minutes) * 60 + float(seconds)
        sends = message.startswith(SENDS)
        if sent is not None and (sends or message.startswith(NODE_BOUNDARY)):
            kind, began = sent
            if at >= began:  # not across midnight
                times.append((kind, at - began))
            sent = None
        if sends and ":" in message:
            sent = (statement_kind(message.split(":", 1)[1]), at)
    return times


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--top", type=int, default=30, help="kinds to print (default 30)")
    args = parser.parse_args(argv)
    seconds, count = Counter(), Counter()
    logs = [log for log in sorted(args.directory.rglob("dbt.log")) if not any(p.endswith("current") for p in log.parts)]
    for log in logs:
        for kind, spent in statement_times(log.read_text(errors="replace")):
            seconds[kind] += spent
            count[kind] += 1
    total = sum(seconds.values())
    print(f"{len(logs)} dbt logs, {sum(count.values())} statements, {total:.0f} s")
    for kind, spent in seconds.most_common(args.top):
        print(f"{spent:8.1f} s {100 * spent / total if total else 0:5.1f}% {count[kind]:6d}  {kind}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
