{#-
    idempotent_merge's configs: read every config of the model once, check it against the
    model's columns and their types, and derive what the other stages need (the guard, the
    scope, the update and compare columns); every problem in one error (idempotent_merge_raise).
    Called by the plan (a table's columns known) and the run (a first load's columns known).
    Its private helpers below: the determinism check of keys, expressions and model code, and
    reading the configs that name columns.
-#}

{% macro idempotent_merge_config(columns, column_types, bounds, problems=none, staging=none) %}
    {#-
        Read every idempotent_merge config of the current model once, check it against the
        model's columns (names) and their Spark types (column_types: lower-cased name ->
        type), and derive what the other macros need: the guard column, the target scope, the
        update and compare columns, the interval bounds (bounds, from interval_bounds()).
        Returns that dict (cfg); otherwise one error lists every problem, including those the
        caller passes in (problems) and a non-deterministic key, predicate, expression or
        model code. staging: the model's staged rows, dropped when it refuses (a Python
        model's table). dbt's standard merge aliases DBT_INTERNAL_DEST / DBT_INTERNAL_SOURCE are
        accepted in incremental_predicates as well as target / source.
    -#}
    {%- set names = columns | map('lower') | list -%}
    {%- set problems = (problems or []) | list -%}
    {#- a column a config names may be written in backticks (`order date`), as dbt's own event_time filter needs -#}
    {%- set raw_key = config.get('unique_key') -%}
    {%- set keys = [] -%}
    {%- for k in ([raw_key] if raw_key is string else (raw_key or [])) -%}
        {%- do keys.append(adapter.column_name(k | string)) -%}
    {%- endfor -%}
    {%- set raw_predicates = config.get('incremental_predicates') or config.get('predicates') or [] -%}
    {%- set predicates = [] -%}
    {%- for p in ([raw_predicates] if raw_predicates is string else raw_predicates) -%}
        {%- set p = modules.re.sub('(?i)\\bDBT_INTERNAL_DEST\\s*\\.', 'target.', p | string) -%}
        {%- do predicates.append(modules.re.sub('(?i)\\bDBT_INTERNAL_SOURCE\\s*\\.', 'source.', p)) -%}
    {%- endfor -%}
    {%- set update_expressions = {} -%}
    {%- for col, expression in (config.get('merge_update_expressions') or {}).items() -%}
        {%- do update_expressions.update({adapter.column_name(col): expression}) -%}
    {%- endfor -%}
    {%- set insert_expressions = {} -%}
    {%- for col, expression in (config.get('merge_insert_expressions') or {}).items() -%}
        {%- do insert_expressions.update({adapter.column_name(col): expression}) -%}
    {%- endfor -%}
    {%- set version_column = idempotent_merge_named_column('version_column') -%}
    {%- set tie_break_column = idempotent_merge_named_column('tie_break_column') -%}
    {#- microbatch: the batch is the interval, event_time its column; rows of the batch that vanished are deleted (unless batch_column) -#}
    {%- set microbatch = config.get('incremental_strategy') == 'microbatch' -%}
    {%- set interval_column = idempotent_merge_named_column('interval_column') or (idempotent_merge_named_column('event_time') if microbatch else none) -%}
    {%- set batch_column = idempotent_merge_named_column('batch_column') -%}
    {%- set delete_missing = config.get('delete_missing_in_interval', microbatch and not batch_column) -%}
    {%- set applied_column = idempotent_merge_applied_column() -%}
    {%- set allow_nondeterministic = config.get('allow_nondeterministic_model', false) -%}

    {#- determinism: keys, conditions, expressions and (unless allowed) the model code -#}
    {%- for setting, expressions in [
        ('unique_key', keys),
        ('incremental_predicates', predicates),
        ('merge_update_expressions', update_expressions.values() | list),
        ('merge_insert_expressions', insert_expressions.values() | list),
        ('the model code', [] if allow_nondeterministic else [model.compiled_code or '']),
    ] -%}
        {%- do problems.extend(idempotent_merge_nondeterministic(setting, expressions)) -%}
    {%- endfor -%}

    {%- if not keys -%}
        {%- set problem -%}
            unique_key is not set. Set it to the column (or list of columns) that identifies a
            row, e.g. unique_key='order_id' or unique_key=['event_date', 'product_id'].
        {%- endset -%}
        {%- do problems.append(problem) -%}
    {%- endif -%}
    {#- an expression (a function call) where a name belongs; a name the model lacks is refused below -#}
    {%- for k in keys if (k | lower) not in names and '(' in k -%}
        {%- set problem -%}
            unique_key entry {{ '"' ~ k ~ '"' }} is not a column name. Compute the key as a
            column in the model and name that column.
        {%- endset -%}
        {%- do problems.append(problem) -%}
    {%- endfor -%}

    {#- every named column must exist in the model -#}
    {%- set named = [
        ('unique_key', keys),
        ('version_column', [version_column] if version_column else []),
        ('tie_break_column', [tie_break_column] if tie_break_column else []),
        ('interval_column', [interval_column] if interval_column else []),
        ('batch_column', [batch_column] if batch_column else []),
        ('merge_update_columns', idempotent_merge_named_columns('merge_update_columns')),
        ('merge_exclude_columns', idempotent_merge_named_columns('merge_exclude_columns')),
        ('unchanged_ignore_columns', idempotent_merge_named_columns('unchanged_ignore_columns')),
        ('merge_update_expressions', update_expressions.keys() | list),
        ('merge_insert_expressions', insert_expressions.keys() | list),
    ] -%}
    {%- for setting, named_columns in named -%}
        {%- for col in named_columns if (col | lower) not in names and (setting != 'unique_key' or '(' not in col) -%}
            {%- set problem -%}
                {{ setting }} names the column {{ '"' ~ col ~ '"' }}, which the model does not
                have. Its columns are: {{ columns | join(', ') }}.
            {%- endset -%}
            {%- do problems.append(problem) -%}
        {%- endfor -%}
    {%- endfor -%}

    {%- if delete_missing and not interval_column -%}
        {%- set problem -%}
            delete_missing_in_interval: true needs interval_column. Without it the delete of
            target rows missing from the source is unbounded and would empty the rest of the
            table. Set interval_column to the column the model filters on the interval.
        {%- endset -%}
        {%- do problems.append(problem) -%}
    {%- endif -%}
    {%- if interval_column and bounds is none -%}
        {%- set problem -%}
            interval_column is set, but no interval was given. Pass the interval to reconcile,
            e.g. --event-time-start 2026-10-03 --event-time-end 2026-10-04, or
            --vars '{data_interval_start: "2026-10-03", data_interval_end: "2026-10-04"}'.
        {%- endset -%}
        {%- do problems.append(problem) -%}
    {%- endif -%}
    {%- set interval_type = 'date' if interval_column and (column_types.get(interval_column | lower, '') | lower) == 'date' else 'timestamp' -%}
    {%- if interval_type == 'date' and bounds is not none and not bounds.whole_days -%}
        {%- do problems.append(interval_not_whole_days(bounds, interval_column)) -%}
    {%- endif -%}
    {%- if tie_break_column and not version_column -%}
        {%- do problems.append('tie_break_column needs version_column: it only orders rows of one key that share a version.') -%}
    {%- endif -%}
    {%- if batch_column and delete_missing -%}
        {%- set problem -%}
            batch_column and delete_missing_in_interval are both set. A key missing from an
            interval's batches has simply received no movement: additive batches never delete.
            Remove delete_missing_in_interval.
        {%- endset -%}
        {%- do problems.append(problem) -%}
    {%- endif -%}
    {%- if batch_column and (applied_column | lower) in names -%}
        {%- set problem -%}
            the model returns a column named {{ applied_column }}, which idempotent_merge adds
            to the table for batch_column (every batch applied to the row). Rename that column
            in the model.
        {%- endset -%}
        {%- do problems.append(problem) -%}
    {%- endif -%}
    {%- if batch_column and version_column -%}
        {%- set problem -%}
            batch_column and version_column are both set. Use batch_column for additive updates
            (each batch applied once per key) or version_column for replacing updates, not both.
        {%- endset -%}
        {%- do problems.append(problem) -%}
    {%- endif -%}
    {%- for col, expression in update_expressions.items() if modules.re.search('(?i)\\btarget\\s*\\.', expression) and not batch_column -%}
        {%- set problem -%}
            merge_update_expressions.{{ col }} = {{ '"' ~ expression ~ '"' }} reads the target's
            current value, so applying the same source twice changes the row twice. Set
            batch_column to a column holding the batch id: each batch is then applied to a key
            exactly once.
        {%- endset -%}
        {%- do problems.append(problem) -%}
    {%- endfor -%}
    {%- for col, expression in insert_expressions.items() if modules.re.search('(?i)\\btarget\\s*\\.', expression) -%}
        {%- set problem -%}
            merge_insert_expressions.{{ col }} = {{ '"' ~ expression ~ '"' }} reads target., but an
            inserted row has no target row. Use source. columns and constants only.
        {%- endset -%}
        {%- do problems.append(problem) -%}
    {%- endfor -%}
    {%- for p in predicates if modules.re.search('(?i)\\bsource\\s*\\.', p) -%}
        {%- set problem -%}
            incremental_predicates entry {{ '"' ~ p ~ '"' }} reads the source. Predicates bound the
            table's side only (target. or DBT_INTERNAL_DEST.); filter the model's rows in the model.
        {%- endset -%}
        {%- do problems.append(problem) -%}
    {%- endfor -%}
    {%- do idempotent_merge_raise('its configuration has problems, so nothing was written:', problems, staging=staging) -%}

    {#- which columns an update sets, and which count as a change -#}
    {%- set lower_keys = keys | map('lower') | list -%}
    {%- set update_only = idempotent_merge_named_columns('merge_update_columns') | map('lower') | list -%}
    {%- set excluded = idempotent_merge_named_columns('merge_exclude_columns') | map('lower') | list -%}
    {%- set ignored = idempotent_merge_named_columns('unchanged_ignore_columns') | map('lower') | list -%}
    {%- set update_columns = [] -%}
    {%- for col in columns -%}
        {%- set c = col | lower -%}
        {%- if c not in lower_keys and c not in excluded and (not update_only or c in update_only) -%}
            {%- do update_columns.append(col) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set compare_columns = [] -%}
    {%- for col in update_columns if (col | lower) not in ignored -%}
        {%- do compare_columns.append(col) -%}
    {%- endfor -%}

    {#- the target-side scope of the ON clause and the target scan -#}
    {%- set interval_in_key = interval_column is not none and (interval_column | lower) in lower_keys -%}
    {%- set scope = predicates | list -%}
    {%- if interval_in_key and bounds is not none -%}
        {%- do scope.append(in_interval('target.' ~ adapter.quote_column(interval_column), interval_type, bounds)) -%}
    {%- endif -%}

    {{ return({
        'model': model.unique_id,
        'columns': columns,
        'column_types': column_types,
        'unique_key': keys,
        'version_column': version_column,
        'tie_break_column': tie_break_column,
        'guard': version_column or batch_column,
        'interval_column': interval_column,
        'interval_in_key': interval_in_key,
        'interval_type': interval_type,
        'bounds': bounds,
        'scope': scope,
        'delete_missing': delete_missing,
        'allow_empty_interval': config.get('allow_empty_interval', false),
        'allow_null_keys': config.get('allow_null_keys', false),
        'allow_nondeterministic': allow_nondeterministic,
        'skip_unchanged': config.get('skip_unchanged', true),
        'batch_column': batch_column,
        'applied_column': applied_column,
        'update_columns': update_columns,
        'compare_columns': compare_columns,
        'update_expressions': update_expressions,
        'insert_expressions': insert_expressions,
        'predicates': predicates,
    }) }}
{% endmacro %}

{% macro idempotent_merge_nondeterministic(setting, expressions) %}
    {#-
        The problems (a list of texts, empty when there are none) of a key, merge condition,
        expression or model code that calls a non-deterministic function: a retry would
        compute other keys and insert its rows a second time. setting names where the
        expressions come from; 'the model code' is read in the model's language (Spark SQL or
        Python), every other setting as Spark SQL. The spellings (with or without
        parentheses, any case; not inside string literals or comments) are found by
        adapter.find_nondeterministic (src/dbt/adapters/lakehouse/strategy/determinism.py).
    -#}
    {%- set language = (model.language or 'sql') if setting == 'the model code' else 'sql' -%}
    {%- set problems = [] -%}
    {%- for expression in expressions -%}
        {%- set code = expression | string -%}
        {%- set found = adapter.find_nondeterministic(code, language) -%}
        {%- if found -%}
            {%- set where = ('line ' ~ found.line ~ ': "' ~ found.text ~ '"') if '\n' in code else ('"' ~ code ~ '"') -%}
            {%- set problem -%}
                {{ setting }} uses the non-deterministic {{ found.what }} in {{ where }}.
                {%- if setting == 'the model code' %}
                A retry would compute it again and get another value: a key built from it
                matches no existing row and inserts the rows a second time. Take times from
                the interval (interval_bounds() / in_interval(); dbt.interval in Python
                models) or from the source rows, and keys from stable columns. If only
                non-key columns may change on a rerun, set allow_nondeterministic_model=true.
                {%- else %}
                A retry would evaluate it again, match no existing row and insert duplicates.
                Use stable columns (a natural or composite business key) or deterministic
                functions such as lower(), coalesce() or sha2().
                {%- endif %}
            {%- endset -%}
            {%- do problems.append(problem) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(problems) }}
{% endmacro %}

{% macro idempotent_merge_named_column(setting) %}
    {#-
        The column a config names (version_column, batch_column, ...), or none; written in
        backticks or not, it is the same column (adapter.column_name).
    -#}
    {%- set written = config.get(setting) -%}
    {{ return(adapter.column_name(written | string) if written else none) }}
{% endmacro %}

{% macro idempotent_merge_named_columns(setting) %}
    {#- The columns a list config names (merge_update_columns, ...), backticks removed. -#}
    {%- set names = [] -%}
    {%- for written in config.get(setting) or [] -%}
        {%- do names.append(adapter.column_name(written | string)) -%}
    {%- endfor -%}
    {{ return(names) }}
{% endmacro %}

{% macro idempotent_merge_applied_column() %}
    {#-
        The column idempotent_merge adds to the table of a model with batch_column: an array of
        every batch id applied to the row, written in the same commit as the row. None for a
        model without batch_column.
    -#}
    {{ return('applied_batches' if config.get('batch_column') else none) }}
{% endmacro %}
