{% macro lakehouse_record_interval(relation, model_id, load, bounds, version=none) %}
    {#-
        Record a run of an interval model in the interval ledger table (adapter.record_interval,
        ledger.py), after its data commit: load is 'create' (first load, full refresh: the table
        starts over), 'merge' or 'unchanged'; bounds the interval (none: a run without one);
        version the table's version or snapshot after the run (none when nothing committed).
        idempotent_merge_run calls it for what it published, lakehouse_publish_audited for
        what it publishes.
    -#}
    {%- do adapter.record_interval(relation, model_id, load, bounds.start if bounds else none, bounds.end if bounds else none, version) -%}
{% endmacro %}
