"""The schedule-table printout (model.md §10): byte-for-byte what the reference prints."""
from kbuild import KernelBuilder, pair
from ts_runtime.rules.simulation import LEGEND, format_schedule_table, simulate_table

# Printed by nvidia-cutlass-dsl 4.8.1 for the same two-task kernel (S=2, 3 iterations).
PAIR_OK = """
===============================================================

|          Prod[0:1)           |          Cons[1:2)           |

===============>   Full (Head + Loop + Tail)   <===============

| src          ConsWrk       0 |                              |
| buf          ProdAcq<-     0 |                              |
| buf          ProdWrk       0 |                              |
| buf          ProdCmt->     0 | buf        ->ConsWai       0 |
| src          ConsWrk       0 | buf          ConsWrk       0 |
| buf          ProdAcq<-     0 | buf        <-ConsRel       0 |
| buf          ProdWrk       0 |                              |
| buf          ProdCmt->     0 | buf        ->ConsWai       0 |
| src          ConsWrk       0 | buf          ConsWrk       0 |
| buf          ProdAcq<-     0 | buf        <-ConsRel       0 |
| buf          ProdWrk       0 |                              |
| buf          ProdCmt->     0 | buf        ->ConsWai       0 |
|                              | buf          ConsWrk       0 |
|                              | buf        <-ConsRel       0 |

===============> End Full (Head + Loop + Tail) <===============

""" + LEGEND

# The same kernel without the consumer's release: the table stops where it blocks.
PAIR_BLOCKED = """
===============================================================

|          Prod[0:1)           |          Cons[1:2)           |

===============>   Full (Head + Loop + Tail)   <===============

| src          ConsWrk       0 |                              |
| buf          ProdAcq<-     0 |                              |
| buf          ProdWrk       0 |                              |
| buf          ProdCmt->     0 | buf        ->ConsWai       0 |
| src          ConsWrk       0 | buf          ConsWrk       0 |
| buf          ProdAcq<-     0 |                              |
| buf          ProdWrk       0 |                              |
| buf          ProdCmt->     0 | buf        ->ConsWai       0 |
| src          ConsWrk       0 | buf          ConsWrk       0 |"""

# A one-task persistent kernel (examples/03, 2 rows): the title is wider than the table.
PERSISTENT = """
================================

|   PersistentCopyTask[0:4)    |

>   Full (Head + Loop + Tail)   <

| row_copy     ProdWrk       0 |
| row_copy     ProdWrk       0 |
| work_queue   ConsTrW    T  0 |
| work_queue ->ConsWai    T  0 |
| work_queue   ConsWrk    T  0 |
| work_queue <-ConsRel    T  0 |

> End Full (Head + Loop + Tail) <

""" + LEGEND


def test_table_pair():
    kb, _, _ = pair(stages=2, n=3)
    assert format_schedule_table(kb.build()) == PAIR_OK


def test_table_blocked():
    kb, _, _ = pair(stages=2, n=3, release=False)
    k = kb.build()
    assert format_schedule_table(k) == PAIR_BLOCKED
    assert [b.task for b in simulate_table(k).blocked] == [0, 1]


def test_table_persistent_one_tile():
    kb = KernelBuilder()
    wq = kb.work_queue("work_queue")
    row = kb.plain("row_copy")
    with kb.task("PersistentCopyTask", src=[wq], dst=[row], num_warps=4) as t:
        with t.work_tiles(wq, skip=True):
            with t.skippable():
                with t.loop(2):
                    t.op(row, "producer_work")
            t.ops(wq, "try_wait", "wait", "get_and_advance_work_tile", "release")
    assert format_schedule_table(kb.build()) == PERSISTENT
