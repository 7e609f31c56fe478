{% macro idempotent_merge_config(columns, column_types) %}
    {#-
        Read and validate every idempotent_merge config of the current model against its
        columns (a list of column names) and their Spark types (column_types: lower-cased
        name -> type). Returns one dict the other idempotent_merge macros read; otherwise
        raises one compiler error listing every problem, before any SQL runs.
    -#}
    {%- set who = model.unique_id -%}
    {%- set names = columns | map('lower') | list -%}
    {%- set errors = [] -%}

    {#- unique_key: one column or a list; deterministic, plain column names -#}
    {%- set raw_key = config.get('unique_key') -%}
    {%- set keys = ([raw_key] if raw_key is string else (raw_key or [])) | list -%}
    {%- set predicates = config.get('incremental_predicates') or config.get('predicates') or [] -%}
    {%- set predicates = [predicates] if predicates is string else predicates | list -%}
    {%- set update_expressions = config.get('merge_update_expressions') or {} -%}
    {%- set insert_expressions = config.get('merge_insert_expressions') or {} -%}
    {%- do idempotent_merge_assert_deterministic('unique_key', keys) -%}
    {%- do idempotent_merge_assert_deterministic('incremental_predicates', predicates) -%}
    {%- do idempotent_merge_assert_deterministic('merge_update_expressions', update_expressions.values() | list) -%}
    {%- do idempotent_merge_assert_deterministic('merge_insert_expressions', insert_expressions.values() | list) -%}
    {%- if not keys -%}
        {%- do errors.append("unique_key is not set. Set it to the column (or list of columns) that identifies a row, e.g. unique_key='order_id' or unique_key=['event_date', 'product_id'].") -%}
    {%- endif -%}
    {%- for k in keys -%}
        {%- if not modules.re.match('^[A-Za-z_][A-Za-z0-9_]*$', k | string) -%}
            {%- do errors.append("unique_key entry " ~ (k | tojson) ~ " is not a column name. Compute the key as a column in the model and name that column.") -%}
        {%- endif -%}
    {%- endfor -%}

    {%- set version_column = config.get('version_column') -%}
    {%- set tie_break_column = config.get('tie_break_column') -%}
    {%- set interval_column = config.get('interval_column') -%}
    {%- set batch_column = config.get('batch_column') -%}
    {%- set delete_missing = config.get('delete_missing_in_interval', false) -%}
    {%- set applied_column = idempotent_merge_applied_column() -%}

    {#- every named column must exist in the model -#}
    {%- set named = {
        'unique_key': keys,
        'version_column': [version_column] if version_column else [],
        'tie_break_column': [tie_break_column] if tie_break_column else [],
        'interval_column': [interval_column] if interval_column else [],
        'batch_column': [batch_column] if batch_column else [],
        'merge_update_columns': config.get('merge_update_columns') or [],
        'merge_exclude_columns': config.get('merge_exclude_columns') or [],
        'unchanged_ignore_columns': config.get('unchanged_ignore_columns') or [],
        'merge_update_expressions': update_expressions.keys() | list,
        'merge_insert_expressions': insert_expressions.keys() | list,
    } -%}
    {%- for setting, cols in named.items() -%}
        {%- for col in cols -%}
            {%- if (col | string | lower) not in names and errors | length == 0 -%}
                {%- do errors.append(setting ~ " names the column " ~ (col | tojson) ~ ", which the model does not have. Its columns are: " ~ (columns | join(', ')) ~ ".") -%}
            {%- endif -%}
        {%- endfor -%}
    {%- endfor -%}

    {%- if delete_missing and not interval_column -%}
        {%- do errors.append("delete_missing_in_interval: true needs interval_column. Without it the delete of target rows missing from the source is unbounded and would empty the rest of the table. Set interval_column to the column the model filters on the interval.") -%}
    {%- endif -%}
    {%- if tie_break_column and not version_column -%}
        {%- do errors.append("tie_break_column needs version_column: it only orders rows of one key that share a version.") -%}
    {%- endif -%}
    {%- if batch_column and delete_missing -%}
        {%- do errors.append("batch_column and delete_missing_in_interval are both set. A key missing from an interval's batches has simply received no movement: additive batches never delete. Remove delete_missing_in_interval.") -%}
    {%- endif -%}
    {%- if batch_column and (applied_column | lower) in names -%}
        {%- do errors.append("the model returns a column named " ~ applied_column ~ ", which idempotent_merge adds to the table for batch_column (every batch applied to the row). Rename that column in the model.") -%}
    {%- endif -%}
    {%- if batch_column and version_column -%}
        {%- do errors.append("batch_column and version_column are both set. Use batch_column for additive updates (each batch applied once per key) or version_column for replacing updates, not both.") -%}
    {%- endif -%}
    {%- for col, expression in update_expressions.items() -%}
        {%- if modules.re.search('(?i)\\btarget\\s*\\.', expression) and not batch_column -%}
            {%- do errors.append("merge_update_expressions." ~ col ~ " = " ~ (expression | tojson) ~ " reads the target's current value, so applying the same source twice changes the row twice. Set batch_column to a column holding the batch id: each batch is then applied to a key exactly once.") -%}
        {%- endif -%}
    {%- endfor -%}
    {%- for col, expression in insert_expressions.items() -%}
        {%- if modules.re.search('(?i)\\btarget\\s*\\.', expression) -%}
            {%- do errors.append("merge_insert_expressions." ~ col ~ " = " ~ (expression | tojson) ~ " reads target., but an inserted row has no target row. Use source. columns and constants only.") -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if errors -%}
        {% set msg %}
Model {{ who }} (incremental_strategy='idempotent_merge') is misconfigured:
{%- for e in errors %}
  - {{ e }}
{%- endfor %}
        {% endset %}
        {{ exceptions.raise_compiler_error(msg) }}
    {%- endif -%}

    {#- which columns an update sets, and which count as a change -#}
    {%- set lower_keys = keys | map('lower') | list -%}
    {%- set update_only = (config.get('merge_update_columns') or []) | map('lower') | list -%}
    {%- set excluded = (config.get('merge_exclude_columns') or []) | map('lower') | list -%}
    {%- set ignored = (config.get('unchanged_ignore_columns') or []) | map('lower') | list -%}
    {%- set update_columns = [] -%}
    {%- for col in columns -%}
        {%- set c = col | lower -%}
        {%- if c not in lower_keys and c not in excluded and (not update_only or c in update_only) -%}
            {%- do update_columns.append(col) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set compare_columns = [] -%}
    {%- for col in update_columns -%}
        {%- if (col | lower) not in ignored -%}
            {%- do compare_columns.append(col) -%}
        {%- endif -%}
    {%- endfor -%}

    {{ return({
        'model': who,
        'columns': columns,
        'unique_key': keys,
        'version_column': version_column,
        'tie_break_column': tie_break_column,
        'interval_column': interval_column,
        'interval_in_key': interval_column is not none and (interval_column | lower) in lower_keys,
        'interval_type': 'date' if interval_column and (column_types.get(interval_column | lower, '') | lower) == 'date' else 'timestamp',
        'delete_missing': delete_missing,
        'allow_empty_interval': config.get('allow_empty_interval', false),
        'allow_null_keys': config.get('allow_null_keys', false),
        'skip_unchanged': config.get('skip_unchanged', true),
        'batch_column': batch_column,
        'applied_column': applied_column if batch_column else none,
        'update_columns': update_columns,
        'compare_columns': compare_columns,
        'update_expressions': update_expressions,
        'insert_expressions': insert_expressions,
        'predicates': predicates,
    }) }}
{% endmacro %}
