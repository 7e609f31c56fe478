{% macro lakehouse_maintain(models, retain='7d', dry_run=false) %}
    {#-
        dbt run-operation lakehouse_maintain --args '{models: [model.p.orders], retain: 7d}'
        (what `lakehouse maintain` runs): compacts each model's table, expires its history
        older than retain and deletes the files only that history held, and drops the
        staging tables killed runs left beside it (maintenance.py, adapter.maintain_table);
        the interval ledger table too. models: unique ids (or names) of models, seeds or
        snapshots. dry_run: say what would be done, change nothing. Everything that stops it
        (a window shorter than a format's safe minimum, a model without a table, a table of
        another format or outside the warehouse) is found first: then nothing is changed, and
        the problems are logged (and returned). Each table's record, or the problems, go to
        dbt's debug log as one line of JSON, prefixed `lakehouse_maintain `.
    -#}
    {%- set tables = [] -%}
    {%- for wanted in models -%}
        {%- set found = [] -%}
        {%- for node in graph.nodes.values() if node.resource_type in ['model', 'seed', 'snapshot'] and wanted in [node.name, node.unique_id] -%}
            {%- do found.append(node) -%}
        {%- endfor -%}
        {%- if found | length != 1 -%}
            {{ exceptions.raise_compiler_error('lakehouse_maintain: ' ~ ('no model, seed or snapshot named ' if not found else 'several nodes named ') ~ (wanted | tojson) ~ '. Pass unique ids or names.') }}
        {%- endif -%}
        {%- set node = found[0] -%}
        {%- do tables.append({'schema': node.schema, 'identifier': node.alias, 'format': node.config.get('file_format'), 'model': node.unique_id}) -%}
    {%- endfor -%}
    {%- set ledger = {'schema': target.ledger_schema, 'identifier': 'interval_ledger', 'format': target.table_format, 'model': 'the interval ledger'} -%}
    {%- if adapter.get_relation(database=none, schema=ledger.schema, identifier=ledger.identifier) is not none -%}
        {%- do tables.append(ledger) -%}
    {%- endif -%}
    {%- set problems = adapter.maintenance_problems(tables, retain | string) -%}
    {%- if problems -%}
        {{ log('lakehouse_maintain ' ~ tojson({'problems': problems})) }}
        {{ log('lakehouse_maintain: nothing was changed, because: ' ~ (problems | join(' ')), info=True) }}
        {{ return(problems) }}
    {%- endif -%}
    {%- for table in tables -%}
        {%- set record = adapter.maintain_table(table, retain | string, dry_run) -%}
        {{ log('lakehouse_maintain ' ~ tojson(record)) }}
    {%- endfor -%}
{% endmacro %}
