"""The one-pass multi request against kazoo's own Transaction serialization: the same bytes."""

from __future__ import annotations

import struct

from hypothesis import given
from hypothesis import strategies as st
from kazoo.protocol.serialization import (
    CheckVersion,
    Create,
    Delete,
    SetData,
    Transaction,
    stat_struct,
)
from kazoo.security import OPEN_ACL_UNSAFE, make_digest_acl

from kafka_topic_operator.zk import transaction as tx

paths = st.text(min_size=1, max_size=40).map(lambda p: "/" + p)
datas = st.one_of(st.none(), st.binary(max_size=64))
versions = st.integers(min_value=-1, max_value=2**31 - 1)
acls = st.sampled_from(
    [
        list(OPEN_ACL_UNSAFE),
        [make_digest_acl("kto", "secret", all=True)],
        [make_digest_acl("kto", "secret", all=True), *OPEN_ACL_UNSAFE],
    ]
)


def operation(acl: list[object]) -> st.SearchStrategy[tuple[object, list[bytes]]]:
    """(kazoo's request object, our parts) for one random operation."""
    return st.one_of(
        st.builds(
            lambda p, d, f: (
                Create(p, d, acl, f),
                [tx.CREATE_HEADER, tx.string(p), tx.buffer(d), tx.acl_list(acl), tx.pack_int(f)],
            ),
            paths,
            datas,
            st.integers(0, 3),
        ),
        st.builds(
            lambda p, d, v: (
                SetData(p, d, v),
                [tx.SET_DATA_HEADER, tx.string(p), tx.buffer(d), tx.pack_int(v)],
            ),
            paths,
            datas,
            versions,
        ),
        st.builds(
            lambda p, v: (Delete(p, v), [tx.DELETE_HEADER, tx.string(p), tx.pack_int(v)]),
            paths,
            versions,
        ),
        st.builds(
            lambda p, v: (CheckVersion(p, v), [tx.CHECK_HEADER, tx.string(p), tx.pack_int(v)]),
            paths,
            versions,
        ),
    )


@given(acls.flatmap(lambda acl: st.lists(operation(acl), max_size=8)))
def test_a_multi_request_is_serialized_as_kazoo_serializes_it(
    ops: list[tuple[object, list[bytes]]],
) -> None:
    ours = tx.Multi([part for _, parts in ops for part in parts])
    theirs = Transaction([request for request, _ in ops])
    assert ours.type == theirs.type
    assert bytes(ours.serialize()) == bytes(theirs.serialize())


results = st.lists(
    st.one_of(
        st.tuples(st.just(tx.CREATE), st.text(max_size=30)),
        st.tuples(st.just(tx.DELETE), st.none()),
        st.tuples(st.just(tx.CHECK), st.none()),
        st.tuples(st.just(tx.SET_DATA), st.tuples(*[st.integers(0, 2**31 - 1)] * 11)),
        st.tuples(st.just(-1), st.sampled_from([-101, -110, -103, 0, -4])),
    ),
    max_size=10,
)


@given(results)
def test_a_multi_response_is_read_as_kazoo_reads_it(answers: list[tuple[int, object]]) -> None:
    data = bytearray(b"\x00" * 3)  # what precedes the results in a reply
    for kind, value in answers:
        data += struct.pack("!iBi", kind, 0, -1 if kind != -1 else int(value))  # type: ignore[call-overload]
        if kind == tx.CREATE:
            data += tx.string(str(value)) if value else tx.pack_int(-1)
        elif kind == tx.SET_DATA:
            data += stat_struct.pack(*value)  # type: ignore[misc]
        elif kind == -1:
            data += tx.pack_int(int(value))  # type: ignore[call-overload]
    data += struct.pack("!iBi", -1, 1, -1)
    ours = tx.Multi.deserialize(bytes(data), 3)
    theirs = Transaction.deserialize(bytes(data), 3)
    assert [(type(r), r if not isinstance(r, Exception) else None) for r in ours] == [
        (type(r), r if not isinstance(r, Exception) else None) for r in theirs
    ]
