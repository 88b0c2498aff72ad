"""The exact plan for the count goals (pure): the fewest replica moves to the most even replica
counts the hard goals allow, then the fewest leader changes to the most even leader counts.

Both are choices: each partition picks its brokers (as many as its replication factor, at most
`max_per_rack` in a rack, only brokers that may hold it), or its leader among its replicas. Each
choice is a 0/1 variable in exactly one partition row, at most one rack row of that partition and
one broker row: the partition and rack rows nest, and so do the broker rows, so the constraint
matrix is a network matrix and the linear optimum is integral (the reference page's min-cost
flow, partitions x racks x brokers), solved by networkx's network simplex.

"Most even" is lexicographic: the lowest highest count, then under it the highest lowest count,
and only then the fewest moves. Where counts within one of each other are possible together with
the hard goals, that is what it gives; where not, the hard goals win and the band says how close
balance got. Among plans with the fewest moves, ones that keep each partition's leader replica
come first (a moved leader is a leadership change too).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

import networkx as nx

from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance.algorithms.bounds import balanced_counts
from kafka_topic_operator.rebalance.algorithms.model import Assignment, ClusterModel, max_per_rack

# Choices (classes of alike partitions x the brokers each may take) above which the exact plan
# is not tried: network simplex takes a few seconds for 200,000 and about a minute for a
# million, where the Spark rounds are faster (make bench measures both).
EXACT_LIMIT = 300_000


class NoPlacement(Exception):
    """No choice keeps the hard goals (`feasibility.blocker` says why, before planning)."""


class TooLarge(Exception):
    """More choices than `EXACT_LIMIT`: the caller plans another way."""


@dataclass(frozen=True)
class Balanced:
    assignment: dict[TopicPartition, tuple[int, ...]]  # every partition, changed or not
    low: int  # the lowest count over the brokers after the plan
    high: int  # and the highest


@dataclass(frozen=True)
class _Item:
    """A partition choosing `need` of its options (brokers), each at its cost, at most `cap`
    in a rack."""

    partition: TopicPartition
    options: tuple[int, ...]
    costs: tuple[int, ...]
    need: int
    cap: int


@dataclass(frozen=True)
class _Choices:
    """Classes of interchangeable items (`units` items each) choosing their options; `pinned`
    counts per broker that no choice changes."""

    options: list[tuple[int, ...]]
    costs: list[tuple[int, ...]]
    need: list[int]  # per item
    caps: list[int]  # per item and rack
    units: list[int]
    brokers: tuple[int, ...]
    pinned: Mapping[int, int]
    racks: Mapping[int, str]
    ceiling: int | None = None

    def placed(self) -> int:
        """What the choices place in all."""
        return sum(n * u for n, u in zip(self.need, self.units, strict=True))


def balance_replicas(
    assignment: Assignment,
    brokers: Sequence[int],
    *,
    racks: Mapping[int, str] | None = None,
    fixed: Collection[TopicPartition] = (),
    receivers: Collection[int] | None = None,
    max_replicas_per_broker: int | None = None,
    limit: int | None = None,
) -> Balanced:
    """The fewest replica moves to the most even counts over `brokers` (see the module's
    docstring). Partitions in `fixed` (excluded topics) stay and count; with `receivers`, only
    those brokers gain replicas (add-brokers); brokers outside `brokers` end empty. A moved
    replica takes the place in its partition's list of the one it replaces. TooLarge when the
    flow would have more than `limit` choices."""
    eligible = tuple(sorted(set(brokers)))
    rack_aware = bool(racks) and all(b in (racks or {}) for b in eligible)
    rack_of = dict(racks or {}) if rack_aware else {}
    rack_count = len({rack_of[b] for b in eligible}) if rack_aware else 1
    takers = set(eligible if receivers is None else receivers)
    pinned = Counter(b for tp in fixed for b in assignment[tp] if b in set(eligible))
    movable = sorted(tp for tp in assignment if tp not in set(fixed))
    weight = len(movable) + 1  # one move outweighs every leader kept
    items = []
    for tp in movable:
        now = assignment[tp]
        mine = tuple(b for b in eligible if b in takers or b in now)
        # Keeping the leader replica comes first among plans of as many moves.
        costs = tuple((0 if b in now else weight) - (b == now[0]) for b in mine)
        items.append(_Item(tp, mine, costs, len(now), max_per_rack(len(now), rack_count)))
    chosen, low, high = _choose(items, eligible, pinned, rack_of, max_replicas_per_broker, limit)
    after = dict(assignment)
    for tp, picked in chosen.items():
        after[tp] = _in_place(assignment[tp], picked)
    return Balanced(after, low, high)


def balance_leaders(
    before: Assignment,
    assignment: Assignment,
    brokers: Sequence[int],
    *,
    fixed: Collection[TopicPartition] = (),
    limit: int | None = None,
) -> Balanced:
    """The fewest leadership changes (against `before`) to the most even leader counts over
    `brokers`, by reordering `assignment`'s replica lists: the chosen leader swaps places with
    the first replica. Partitions in `fixed` keep their order."""
    eligible = tuple(sorted(set(brokers)))
    pinned = Counter(assignment[tp][0] for tp in fixed if assignment[tp])
    movable = sorted(tp for tp in assignment if tp not in set(fixed) and assignment[tp])
    weight = len(movable) + 1  # a leadership change outweighs every reorder
    items = []
    for tp in movable:
        mine = tuple(sorted(b for b in assignment[tp] if b in set(eligible)))
        was = before.get(tp, (None,))[0]
        costs = tuple(weight * (b != was) + (b != assignment[tp][0]) for b in mine)
        items.append(_Item(tp, mine, costs, 1, 1))
    chosen, low, high = _choose(items, eligible, {b: pinned[b] for b in eligible}, {}, None, limit)
    after = dict(assignment)
    for tp, (leader,) in chosen.items():
        now = list(assignment[tp])
        i = now.index(leader)
        now[0], now[i] = now[i], now[0]
        after[tp] = tuple(now)
    return Balanced(after, low, high)


def _choose(
    items: Sequence[_Item],
    brokers: tuple[int, ...],
    pinned: Mapping[int, int],
    racks: Mapping[int, str],
    ceiling: int | None,
    limit: int | None,
) -> tuple[dict[TopicPartition, list[int]], int, int]:
    """(what each item picks, low, high). Items alike in options, costs, need and cap are one
    class in the flow, with capacities times their number: any integral flow of a class deals
    out to its items round-robin, its units sorted by rack and broker (a broker carries at most
    one unit per item, and a rack at most `cap`), and every item of a class costs the same."""
    classes: dict[tuple[tuple[int, ...], tuple[int, ...], int, int], list[TopicPartition]] = {}
    for item in items:
        key = (item.options, item.costs, item.need, item.cap)
        classes.setdefault(key, []).append(item.partition)
    for item in items:
        _check_alone(item, racks)
    keys = list(classes)
    if limit is not None and sum(len(k[0]) for k in keys) > limit:
        raise TooLarge(f"{sum(len(k[0]) for k in keys)} choices, above {limit}")
    problem = _Choices([k[0] for k in keys], [k[1] for k in keys], [k[2] for k in keys],
                       [k[3] for k in keys], [len(classes[k]) for k in keys], brokers, pinned,
                       racks, ceiling)  # fmt: skip
    flows, low, high = _solve(problem)
    out = {}
    for key, flow in zip(keys, flows, strict=True):
        members = classes[key]
        units = sorted((b for b, n in flow.items() for _ in range(n)),
                       key=lambda b: (racks.get(b, ""), b))  # fmt: skip
        for i, tp in enumerate(members):
            out[tp] = units[i :: len(members)]
    return out, low, high


def _check_alone(item: _Item, racks: Mapping[int, str]) -> None:
    """NoPlacement naming the partition when it cannot choose enough brokers even alone."""
    room = len(item.options)
    if racks:
        in_rack = Counter(racks[b] for b in item.options)
        room = sum(min(item.cap, n) for n in in_rack.values())
    if room < item.need:
        brokers = ", ".join(map(str, item.options)) or "none"
        per_rack = f" with at most {item.cap} in a rack" if racks else ""
        raise NoPlacement(
            f"partition {item.partition} cannot place its {item.need} replicas{per_rack} on "
            f"the brokers it may use ({brokers})"
        )


def _in_place(now: tuple[int, ...], picked: Collection[int]) -> tuple[int, ...]:
    """`now` with the brokers not picked replaced, in order, by the picked ones it lacks."""
    arriving = iter(sorted(set(picked) - set(now)))
    return tuple(b if b in picked else next(arriving) for b in now)


def _solve(problem: _Choices) -> tuple[list[dict[int, int]], int, int]:
    """(the units each class sends each broker, low, high): counts within one of each other when the
    constraints allow it, else the lexicographically most even band; then the cheapest."""
    total = problem.placed() + sum(problem.pinned.get(b, 0) for b in problem.brokers)
    q, r = balanced_counts(total, len(problem.brokers))
    top = total if problem.ceiling is None else problem.ceiling
    picked = _cheapest(problem, q, min(q + (r > 0), top))
    if picked is not None:
        return picked, q, min(q + (r > 0), top)
    # The counts cannot all be within one: the lowest feasible highest count first, then the
    # highest feasible lowest count under it (each feasible band contains the wider ones).
    least_high = max(problem.pinned.values(), default=0)
    high = _least(lambda h: _cheapest(problem, 0, h, costless=True) is not None, least_high, top)
    low = -_least(lambda m: _cheapest(problem, -m, high, costless=True) is not None, -q, 0)
    picked = _cheapest(problem, low, high)
    if picked is None:
        raise NoPlacement("no placement within the most even band")
    return picked, low, high


def _least(feasible: Callable[[int], bool], lo: int, hi: int) -> int:
    """The least value in [lo, hi] for which `feasible` holds, given that it holds for every
    value above one that does (binary search); NoPlacement when it holds for none."""
    if not feasible(hi):
        raise NoPlacement("no placement keeps the hard goals")
    while lo < hi:
        mid = (lo + hi) // 2
        if feasible(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def _cheapest(
    problem: _Choices, low: int, high: int, *, costless: bool = False
) -> list[dict[int, int]] | None:
    """The cheapest choice with every broker's count in [low, high] (any, when `costless`),
    or None when there is none: a min-cost flow (network simplex) from the groups, through a
    node per group and rack where the rack limit binds, to the brokers; each broker must
    take what brings it to `low`, and may take up to `high`, through its arc to the sink."""
    graph: nx.DiGraph[tuple[object, ...]] = nx.DiGraph()
    sink = ("sink",)
    taken = 0
    for b in problem.brokers:
        held = problem.pinned.get(b, 0)
        if held > high:
            return None
        must = max(0, low - held)
        graph.add_node(("b", b), demand=must)
        graph.add_edge(("b", b), sink, capacity=high - held - must, weight=0)
        taken += must
    rest = problem.placed() - taken
    if rest < 0:
        return None
    graph.add_node(sink, demand=rest)
    starts: list[list[tuple[object, ...]]] = []
    for g, options in enumerate(problem.options):
        units = problem.units[g]
        graph.add_node(("g", g), demand=-problem.need[g] * units)
        starts.append([])
        in_rack = Counter(problem.racks[b] for b in options) if problem.racks else Counter()
        for b, cost in zip(options, problem.costs[g], strict=True):
            rack = problem.racks.get(b)
            start: tuple[object, ...] = ("g", g)
            if rack is not None and in_rack[rack] > problem.caps[g]:
                start = ("r", g, rack)
                if not graph.has_edge(("g", g), start):
                    graph.add_edge(("g", g), start, capacity=problem.caps[g] * units, weight=0)
            graph.add_edge(start, ("b", b), capacity=units, weight=0 if costless else cost)
            starts[g].append(start)
    try:
        _, flow = nx.network_simplex(graph)
    except nx.NetworkXUnfeasible:
        return None
    return [
        {b: flow[start][("b", b)] for b, start in zip(options, starts[g], strict=True)
         if flow[start][("b", b)]}
        for g, options in enumerate(problem.options)
    ]  # fmt: skip


def fewest_moves(model: ClusterModel, brokers: tuple[int, ...]) -> int | None:
    """The fewest replica moves after which every partition keeps its replication factor, no
    rack holds more of a partition than allowed (when every broker has a rack), and replica
    counts over `brokers` differ by at most one; None when no such placement exists."""
    racks = {b: r for b in brokers if (r := model.rack_of(b)) is not None}
    try:
        plan = balance_replicas(model.assignment, brokers, racks=racks)
    except NoPlacement:
        return None
    if plan.high - plan.low > 1:
        return None
    return sum(len(set(plan.assignment[tp]) - set(r)) for tp, r in model.assignment.items())
