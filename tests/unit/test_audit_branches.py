"""Audit branch names and which branches a run discards as leftovers
(src/dbt/adapters/lakehouse/audit/branches.py)."""

from __future__ import annotations

from datetime import UTC, datetime

from dbt.adapters.lakehouse.audit.branches import branch_name, leftover

INVOCATION = "6310B01C-2659-4c0b-93a0-1e91bfa03f5d"
MINE = "dbt_audit_20261206t171500z_6310b01c_2659_4c0b_93a0_1e91bfa03f5d"
AT_1715 = "dbt_audit_20261206t171500z_eb52d539_d5be_4d29_a0b9_1e91bfa03f5d"


def test_a_branch_names_when_it_was_staged_and_by_which_invocation():
    staged = datetime(2026, 12, 6, 17, 15, 0, tzinfo=UTC)
    assert branch_name(INVOCATION, staged) == MINE


def test_another_builds_branch_is_a_leftover_only_once_twelve_hours_old():
    """A run at once with this one keeps its branch (seen under Airflow: a live stage dropped
    under its build); a killed build's branch goes at a run 12 hours later or more; this
    invocation's own branch and any other branch never; a branch named without its time (the
    earlier naming) at once."""
    at = {
        "17:16, another run at once": datetime(2026, 12, 6, 17, 16, tzinfo=UTC),
        "05:14 next day, 11 h 59 min later": datetime(2026, 12, 7, 5, 14, tzinfo=UTC),
        "05:15 next day, 12 h later": datetime(2026, 12, 7, 5, 15, tzinfo=UTC),
    }
    assert {when: leftover(AT_1715, INVOCATION, now) for when, now in at.items()} == {
        "17:16, another run at once": False,
        "05:14 next day, 11 h 59 min later": False,
        "05:15 next day, 12 h later": True,
    }
    a_year_on = datetime(2027, 12, 6, tzinfo=UTC)
    assert leftover(MINE, INVOCATION, a_year_on) is False
    assert leftover("main", INVOCATION, a_year_on) is False
    assert leftover("audit_1", INVOCATION, a_year_on) is False
    unstamped = "dbt_audit_eb52d539_d5be_4d29_a0b9_1e91bfa03f5d"
    assert leftover(unstamped, INVOCATION, datetime(2026, 12, 6, 17, 16, tzinfo=UTC)) is True
