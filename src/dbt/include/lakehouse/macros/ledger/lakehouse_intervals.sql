{% macro lakehouse_intervals(model, missing_ok=false) %}
    {#-
        dbt run-operation lakehouse_intervals --args '{model: orders}'
        Lists the intervals the model's table holds, each with the table version (Delta) or
        snapshot id (Iceberg) and the dbt invocation that last changed it, and the gaps
        between the model's begin config (or its first interval) and its last interval. Read
        from the interval ledger table, where every run of the model that ended well recorded
        its interval (adapter.interval_ledger, ledger.py): it outlives the table's history
        (expired snapshots, a cleaned Delta log, compaction), and a run that changed nothing
        counts. model: the model's name or unique_id. missing_ok: a model without a table yet
        has no interval instead of an error. The listing also goes to dbt's debug log as one
        line of JSON, prefixed `lakehouse_intervals ` (what `lakehouse intervals` and
        `lakehouse catchup` read).
    -#}
    {%- set found = [] -%}
    {%- for node in graph.nodes.values() if node.resource_type == 'model' and model in [node.name, node.unique_id] -%}
        {%- do found.append(node) -%}
    {%- endfor -%}
    {%- if found | length != 1 -%}
        {{ exceptions.raise_compiler_error('lakehouse_intervals: ' ~ ('no model named ' if not found else 'several models named ') ~ (model | tojson) ~ '. Pass the model name (or its unique_id) as --args \'{model: <name>}\'.') }}
    {%- endif -%}
    {%- set node = found[0] -%}
    {%- set relation = adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias) -%}
    {%- if relation is none and missing_ok -%}
        {{ log('lakehouse_intervals ' ~ tojson({'model': node.unique_id, 'intervals': []})) }}
        {{ return({'intervals': [], 'lines': []}) }}
    {%- elif relation is none -%}
        {{ exceptions.raise_compiler_error('lakehouse_intervals: ' ~ node.unique_id ~ ' has no table yet (' ~ node.schema ~ '.' ~ node.alias ~ '). Run the model first.') }}
    {%- endif -%}
    {%- set iceberg = node.config.get('file_format') == 'iceberg' -%}
    {%- set ledger = adapter.interval_ledger(node.unique_id, relation | string, node.config.get('begin'), 'snapshot' if iceberg else 'version') -%}
    {{ log('lakehouse_intervals ' ~ tojson({'model': node.unique_id, 'intervals': ledger.intervals})) }}
    {%- for line in ledger.lines -%}
        {{ log(line, info=True) }}
    {%- endfor -%}
    {{ return(ledger) }}
{% endmacro %}
