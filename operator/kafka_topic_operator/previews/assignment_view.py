"""Human views of a replica assignment for `kto assign`: per partition, and per broker.

Pure text rendering; the CLI prints what these return.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence


def compress_ids(ids: Iterable[int], limit: int = 48) -> str:
    """`0,1,2,3,7,9,10` → `0-3,7,9-10`; cut with a count when longer than `limit` characters."""
    ordered = sorted(set(ids))
    runs: list[str] = []
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        runs.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    text = ",".join(runs)
    if len(text) <= limit:
        return text or "-"
    shown: list[str] = []
    for run in runs:
        if len(",".join([*shown, run])) > limit - 12:
            break
        shown.append(run)
    return ",".join(shown) + f",… ({len(ordered)} in all)"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[c]) for r in rows)) for c, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip()]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return lines


def render_assignment(
    assignment: Mapping[int, Sequence[int]],
    broker_ids: Sequence[int],
    racks: Mapping[int, str | None],
    new_partitions: Iterable[int] | None = None,
) -> str:
    """Per partition the replicas (leader first), then per broker what it leads and follows."""
    added = set(new_partitions) if new_partitions is not None else set()
    show_racks = any(racks.get(b) for b in broker_ids)
    header = ["Partition", "Leader", "Replicas"] + (["Racks"] if show_racks else [])
    header += ["New"] if added else []
    rows: list[list[str]] = []
    for partition in sorted(assignment):
        replicas = assignment[partition]
        row = [str(partition), str(replicas[0]), ",".join(map(str, replicas))]
        if show_racks:
            row.append(",".join(racks.get(b) or "-" for b in replicas))
        if added:
            row.append("yes" if partition in added else "")
        rows.append(row)

    leads: dict[int, list[int]] = {b: [] for b in broker_ids}
    follows: dict[int, list[int]] = {b: [] for b in broker_ids}
    for partition, replicas in assignment.items():
        leads.setdefault(replicas[0], []).append(partition)
        for follower in replicas[1:]:
            follows.setdefault(follower, []).append(partition)
    brokers = sorted(set(leads) | set(follows))
    broker_header = ["Broker"] + (["Rack"] if show_racks else [])
    broker_header += ["Leader", "Follower", "Total", "Leads", "Follows"]
    broker_rows: list[list[str]] = []
    for broker in brokers:
        row = [str(broker)] + ([racks.get(broker) or "-"] if show_racks else [])
        row += [
            str(len(leads[broker])),
            str(len(follows[broker])),
            str(len(leads[broker]) + len(follows[broker])),
            compress_ids(leads[broker]),
            compress_ids(follows[broker]),
        ]
        broker_rows.append(row)
    return "\n".join([*_table(header, rows), "", *_table(broker_header, broker_rows)])
