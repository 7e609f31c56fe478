{% macro lakehouse_record_interval(relation, model_id, load, bounds, version=none, since=none) %}
    {#-
        Record a run of an interval model in the interval ledger table (adapter.record_interval,
        ledger.py), after its data commit: load is 'create' (first load, full refresh: the table
        starts over), 'merge' or 'unchanged'; bounds the interval (none: a run without one);
        version the table's version or snapshot after the run (none when nothing committed);
        since, for a create, when it began (adapter.ledger_clock()): its row is ordered there,
        so another run that merged into the table it created (two first loads at once) and
        recorded first is not taken as started over.
        idempotent_merge_run calls it for what it published, lakehouse_publish_audited for
        what it publishes.
    -#}
    {%- do adapter.record_interval(relation, model_id, load, bounds.start if bounds else none, bounds.end if bounds else none, version, since if load == 'create' else none) -%}
{% endmacro %}
