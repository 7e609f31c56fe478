{#-
    idempotent_merge, stage 2: the checks on real data, each before anything is written unless
    said otherwise: the model's contract (its columns' names and types), the model's columns
    against the table's (on_schema_change), one profile query of the staged source (NULL keys,
    NULLs in not_null columns of the contract, rows outside the interval, conflicting rows, an
    empty source), a first load against a table another run created meanwhile, and after the
    MERGE of a batch_column model, that every batch it meant to apply was applied.
-#}

{% macro idempotent_merge_check_contract(staging) %}
    {#-
        dbt's model contract (contract: {enforced: true}) checked on the model's staged rows:
        the staged columns must be exactly the yml's columns, by name and Spark type, compared
        as dbt compares them (get_column_schema_from_query on both sides, format_columns). dbt
        checks a table model's query before it runs, but not a custom strategy's; and it
        refuses a contract on a Python model outright (dbt-core issue 6984), so a Python
        model asks for the same check with enforce_column_types: true: a pandas column that
        turned bigint into double is refused before the first load creates the table with it.
        Refused with dbt's own contract error (its table of mismatches), after dropping a
        Python model's staging table; the first load then creates the yml's types.
    -#}
    {%- if not idempotent_merge_contract_enforced() -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set declared = [] -%}
    {%- if model['columns'] -%}
        {%- set declared = format_columns(get_column_schema_from_query(get_empty_schema_sql(model['columns']))) -%}
    {%- endif -%}
    {%- set staged = format_columns(get_column_schema_from_query('select * from ' ~ staging)) -%}
    {%- if not declared or (staged | map(attribute='formatted') | sort | list) != (declared | map(attribute='formatted') | sort | list) -%}
        {%- do idempotent_merge_drop_staging(staging) -%}
        {%- do exceptions.raise_contract_error(declared, staged) -%}
    {%- endif -%}
{% endmacro %}

{% macro idempotent_merge_contract_enforced() %}
    {#-
        Whether the model's yml columns bind it: dbt's contract (contract: {enforced: true}, SQL
        models: dbt refuses a contract on a Python model when it parses the project), or
        enforce_column_types: true, the same check for a Python model.
    -#}
    {%- set contract = config.get('contract') -%}
    {{ return((contract is not none and contract.enforced is sameas true) or config.get('enforce_column_types', false) is sameas true) }}
{% endmacro %}

{% macro idempotent_merge_not_null_columns() %}
    {#-
        The columns an enforced contract declares not_null (a column's own constraint, or a
        model-level not_null constraint's columns), in the model's column order. The strategy
        enforces them itself, on the staged rows before anything is written: the same guarantee
        on both formats, where a table constraint would exist on Delta only (Iceberg has no SET
        NOT NULL) and would fail mid-write.
    -#}
    {%- set names = [] -%}
    {%- if idempotent_merge_contract_enforced() -%}
        {%- for name, col in model['columns'].items() -%}
            {%- if col['constraints'] | selectattr('type', 'equalto', 'not_null') | list -%}
                {%- do names.append(name) -%}
            {%- endif -%}
        {%- endfor -%}
        {%- for constraint in model.get('constraints', []) if constraint['type'] == 'not_null' -%}
            {%- for name in constraint['columns'] if name not in names -%}
                {%- do names.append(name) -%}
            {%- endfor -%}
        {%- endfor -%}
    {%- endif -%}
    {{ return(names) }}
{% endmacro %}

{% macro idempotent_merge_schema_changes(on_schema_change, source_columns, table, target, staging) %}
    {#-
        dbt's on_schema_change for idempotent_merge, from the column lists already read (no
        describe again): the model's columns (source_columns) against the table's (table),
        leaving out the applied-batches column the strategy adds itself. fail (this project's
        folder default) refuses with both lists; ignore changes nothing; append_new_columns /
        sync_all_columns alter the table through dbt's sync_column_schemas, except that
        append_new_columns refuses a type change, which it would otherwise ignore silently. Returns the names
        the table gained and lost: {'added': [...], 'removed': [...]}.
    -#}
    {%- set applied = idempotent_merge_applied_column() -%}
    {%- set target_columns = table.columns | rejectattr('name', 'equalto', applied) | list -%}
    {%- set added = diff_columns(source_columns.columns, target_columns) -%}
    {%- set removed = diff_columns(target_columns, source_columns.columns) -%}
    {%- set retyped = diff_column_data_types(source_columns.columns, target_columns) -%}
    {%- if not (added or removed or retyped) or on_schema_change == 'ignore' -%}
        {{ return({'added': [], 'removed': []}) }}
    {%- endif -%}
    {#- append_new_columns adds columns only: a type change would be ignored without a word -#}
    {%- if on_schema_change == 'fail' or (retyped and on_schema_change == 'append_new_columns') -%}
        {%- do idempotent_merge_schema_refusal(on_schema_change, added, removed, retyped, target_columns, staging) -%}
    {%- endif -%}
    {%- do sync_column_schemas(on_schema_change, target, {
        'schema_changed': true,
        'source_not_in_target': added,
        'target_not_in_source': removed,
        'source_columns': source_columns.columns,
        'target_columns': target_columns,
        'new_target_types': retyped,
    }) -%}
    {{ return({
        'added': added | map(attribute='name') | list,
        'removed': (removed | map(attribute='name') | list) if on_schema_change == 'sync_all_columns' else [],
    }) }}
{% endmacro %}

{% macro idempotent_merge_schema_refusal(on_schema_change, added, removed, retyped, target_columns, staging) %}
    {#-
        The refusal of a schema change that on_schema_change does not apply: every difference
        on a line of its own (a type change with the table's type and the model's), and only
        the fixes that work for those differences: append_new_columns for new columns (dbt-spark
        drops no column, so not sync_all_columns for missing ones), a cast in the model for a
        type change (append_new_columns never changes a type), and always a --full-refresh or
        an ALTER by hand.
    -#}
    {%- set problems = [] -%}
    {%- if added -%}
        {%- do problems.append('in the model, not in the table: ' ~ (added | map(attribute='name') | join(', '))) -%}
    {%- endif -%}
    {%- if removed -%}
        {%- do problems.append('in the table, not in the model: ' ~ (removed | map(attribute='name') | join(', '))) -%}
    {%- endif -%}
    {%- for change in retyped -%}
        {%- set old = target_columns | selectattr('name', 'equalto', change.column_name) | first -%}
        {%- do problems.append('column ' ~ change.column_name ~ ' is ' ~ old.data_type ~ ' in the table and ' ~ change.new_type ~ ' in the model') -%}
    {%- endfor -%}
    {%- set fixes = [] -%}
    {%- if added -%}
        {%- do fixes.append('set on_schema_change to append_new_columns to add the new columns') -%}
    {%- endif -%}
    {%- if removed -%}
        {#- dbt-spark's sync_all_columns refuses to drop a column on every format -#}
        {%- do fixes.append("select the table's missing columns in the model again") -%}
    {%- endif -%}
    {%- if retyped -%}
        {%- do fixes.append("cast the column in the model to the table's type") -%}
    {%- endif -%}
    {%- do fixes.append('rebuild the table with --full-refresh over [begin, end)') -%}
    {%- do fixes.append('alter the table yourself and rerun') -%}
    {%- set headline -%}
        {%- if on_schema_change == 'fail' -%}
            the model's columns and the table's are out of sync (on_schema_change: fail), so nothing was written:
        {%- else -%}
            a column's type changed, which on_schema_change {{ on_schema_change }} does not apply (it adds new columns only), so nothing was written:
        {%- endif -%}
    {%- endset -%}
    {%- set fix = (fixes | join(', or ')) ~ '.' -%}
    {%- do idempotent_merge_raise(headline, problems, staging=staging, fix=fix[0] | upper ~ fix[1:]) -%}
{% endmacro %}

{% macro idempotent_merge_check_source(cfg, source, target) %}
    {#-
        Inspect the model's new rows (source) before anything is written and refuse what would
        make the merge wrong. target is the existing table, or none on the first run.
        Refused, each with the offending values and the fix:
          - a NULL in a key column (unless allow_null_keys), or a NULL version / batch id;
          - a NULL in a column the model's enforced contract declares not_null;
          - rows outside the requested interval when interval_column is set;
          - two rows of one key with the same version (or batch; without either, any two
            different rows of one key) carrying different values, unless tie_break_column
            orders them;
          - an empty source while the target holds rows in the interval that
            delete_missing_in_interval would delete (unless allow_empty_interval).
        One aggregate query (a single pass over the source, one distinct count: its keys)
        counts rows, keys, NULLs and rows outside the interval. When every key has one row
        (the usual interval), nothing can conflict and the (key, guard) pairs are the keys.
        Only when some key has several rows a second pass counts the distinct (key, guard)
        pairs (for batch_column, (key, batch)) and the distinct rows: conflicting rows exist
        exactly when there are more of the second, and only then a third query fetches
        examples for the message. Each distinct count more in one query makes Spark expand
        every row once more, which is why the usual case counts only the keys. The table is
        read only when the source is empty.
        Returns {'source_rows': n, 'source_keys': n, 'source_units': n}: units are the keys, or
        for batch_column the distinct (key, batch) pairs.
    -#}
    {%- set keys = cfg.unique_key -%}
    {%- set guard = cfg.guard -%}
    {%- set tie_columns = keys + ([guard] if guard else []) + ([cfg.tie_break_column] if cfg.tie_break_column else []) -%}
    {%- set null_key = [] -%}
    {%- for k in idempotent_merge_names(keys) -%}{%- do null_key.append(k ~ ' is null') -%}{%- endfor -%}
    {%- set interval_column = adapter.quote_column(cfg.interval_column) if cfg.interval_column else none -%}
    {%- set in_scope = in_interval(interval_column, cfg.interval_type, cfg.bounds) if interval_column else none -%}
    {%- set not_null = idempotent_merge_not_null_columns() -%}
    {%- set profile_sql -%}
        select
            count(*) as source_rows,
            count(distinct struct({{ idempotent_merge_names(keys) | join(', ') }})) as source_keys,
            count_if({{ null_key | join(' or ') }}) as null_key_rows,
            {{ 'count_if(' ~ adapter.quote_column(guard) ~ ' is null)' if guard else '0' }} as null_guard_rows,
            {{ 'count_if(not coalesce(' ~ in_scope ~ ', false))' if in_scope else '0' }} as outside_rows,
            {{ 'cast(min(' ~ interval_column ~ ') as string)' if in_scope else "''" }} as min_interval_value,
            {{ 'cast(max(' ~ interval_column ~ ') as string)' if in_scope else "''" }} as max_interval_value
            {%- for c in idempotent_merge_names(not_null) %},
            count_if({{ c }} is null) as null_in_not_null_{{ loop.index }}
            {%- endfor %}
        from {{ source }}
    {%- endset -%}
    {%- set p = run_query(profile_sql).rows[0] -%}
    {#- one row per key: the (key, guard) pairs are the keys and every row is distinct -#}
    {%- set repeats = {'source_units': p['source_keys'], 'distinct_rows': p['source_rows']} -%}
    {%- if p['source_rows'] > p['source_keys'] -%}
        {%- set repeats_sql -%}
            select
                count(distinct struct({{ idempotent_merge_names(tie_columns) | join(', ') }})) as source_units,
                count(distinct struct({{ idempotent_merge_names(cfg.columns) | join(', ') }})) as distinct_rows
            from {{ source }}
        {%- endset -%}
        {%- set counted = run_query(repeats_sql).rows[0] -%}
        {%- do repeats.update({'source_units': counted['source_units'], 'distinct_rows': counted['distinct_rows']}) -%}
    {%- endif -%}
    {%- set problems = [] -%}
    {%- if p['null_key_rows'] > 0 and not cfg.allow_null_keys -%}
        {%- set problem -%}
            {{ p['null_key_rows'] }} source row(s) have a NULL in the key ({{ keys | join(', ') }}).
            Fill the key in the model (e.g. coalesce), filter those rows out, or set
            allow_null_keys: true to match NULL key parts null-safely.
        {%- endset -%}
        {%- do problems.append(problem) -%}
    {%- endif -%}
    {%- if p['null_guard_rows'] > 0 -%}
        {%- set problem -%}
            {{ p['null_guard_rows'] }} source row(s) have a NULL {{ guard }}, so they cannot be
            ordered against the table's rows. Give every row a {{ guard }}.
        {%- endset -%}
        {%- do problems.append(problem) -%}
    {%- endif -%}
    {%- for c in not_null -%}
        {%- set nulls = p['null_in_not_null_' ~ loop.index] -%}
        {%- if nulls > 0 -%}
            {%- set problem -%}
                {{ nulls }} source row(s) have a NULL {{ c }}, which the model's contract declares
                not_null. Fill {{ c }} in the model (e.g. coalesce) or filter those rows out.
            {%- endset -%}
            {%- do problems.append(problem) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if p['outside_rows'] > 0 -%}
        {%- set problem -%}
            {{ p['outside_rows'] }} source row(s) have {{ cfg.interval_column }} outside the
            requested interval [{{ cfg.bounds.start.isoformat() }}, {{ cfg.bounds.end.isoformat() }})
            (values from {{ p['min_interval_value'] }} to {{ p['max_interval_value'] }}). Filter
            the model with {{ "{{ in_interval('" ~ interval_column ~ "', '" ~ cfg.interval_type ~ "') }}" }}.
        {%- endset -%}
        {%- do problems.append(problem) -%}
    {%- endif -%}
    {%- if not problems and repeats.distinct_rows > repeats.source_units -%}
        {%- do problems.append(idempotent_merge_conflicts(cfg, source, tie_columns)) -%}
    {%- endif -%}
    {%- if not problems and p['source_rows'] == 0 and cfg.delete_missing and target is not none and not cfg.allow_empty_interval -%}
        {%- set at_risk_sql -%}
            select count(*) as n from {{ target }} where {{ in_scope }}
        {%- endset -%}
        {%- set at_risk = run_query(at_risk_sql).rows[0]['n'] -%}
        {%- if at_risk > 0 -%}
            {%- set problem -%}
                the source is empty for [{{ cfg.bounds.start.isoformat() }}, {{ cfg.bounds.end.isoformat() }})
                but the table holds {{ at_risk }} row(s) there, which delete_missing_in_interval
                would delete. A late or missing upstream file must not wipe the interval: load
                the input first, or set allow_empty_interval: true if the interval really is
                empty now.
            {%- endset -%}
            {%- do problems.append(problem) -%}
        {%- endif -%}
    {%- endif -%}
    {%- do idempotent_merge_raise('nothing was written, because', problems, staging=source) -%}
    {{ return({
        'source_rows': p['source_rows'],
        'source_keys': p['source_keys'],
        'source_units': repeats.source_units if cfg.batch_column else p['source_keys'],
    }) }}
{% endmacro %}

{% macro idempotent_merge_conflicts(cfg, source, tie_columns) %}
    {#-
        The problem text for source rows that share a key and guard (version or batch; the
        key alone without either) but differ in other values, with up to five examples. Run
        only when idempotent_merge_check_source counted such rows.
    -#}
    {%- set tie_list = idempotent_merge_names(tie_columns) | join(', ') -%}
    {%- set examples_sql -%}
        select {{ tie_list }}, count(*) as variants
        from (select distinct {{ idempotent_merge_names(cfg.columns) | join(', ') }} from {{ source }}) as distinct_rows
        group by {{ tie_list }}
        having count(*) > 1
        order by {{ tie_list }}
        limit 5
    {%- endset -%}
    {%- set shown = [] -%}
    {%- for row in run_query(examples_sql).rows -%}
        {%- set parts = [] -%}
        {%- for c in tie_columns -%}{%- do parts.append(c ~ '=' ~ row[c]) -%}{%- endfor -%}
        {%- do shown.append('(' ~ (parts | join(', ')) ~ ': ' ~ row['variants'] ~ ' different rows)') -%}
    {%- endfor -%}
    {%- set problem -%}
        {%- if cfg.batch_column -%}
            several source rows share a key and {{ cfg.guard }} but differ in other columns:
            {{ shown | join('; ') }}. A batch applies one row per key. Fix the input, or sum the
            batch's rows per key in the model.
        {%- elif cfg.guard -%}
            several source rows share a key and {{ cfg.guard }} but differ in other columns, so
            none of them is the newest: {{ shown | join('; ') }}. Fix the input, or set
            tie_break_column to a column that orders such rows deterministically.
        {%- else -%}
            several different source rows share a key and there is no version_column to pick
            the newest: {{ shown | join('; ') }}. Set version_column (e.g. updated_at), or make
            the model return one row per key.
        {%- endif -%}
    {%- endset -%}
    {{ return(problem) }}
{% endmacro %}

{% macro idempotent_merge_absent(target) %}
    {#-
        A first load decides "no table yet" from dbt's relation cache, filled when the run
        started. Another run (of the same model, for another interval) may have created the
        table since; creating it again would replace that run's rows. Ask the metastore again
        (show tables: names only) right before the CREATE: false when the table is there now,
        and the run then merges into it, as its rerun would. The CREATE itself never replaces
        (idempotent_merge_create_sql), so a table created between this check and the CREATE
        fails the CREATE, which is handled the same way (idempotent_merge_create).
    -#}
    {%- set found = run_query("show tables in " ~ target.schema ~ " like '" ~ target.identifier ~ "'") -%}
    {{ return(not (found.rows | rejectattr(2) | list)) }}
{% endmacro %}

{% macro idempotent_merge_verify_batches(cfg, changes, target, attempt=none) %}
    {#-
        After the MERGE of a batch_column model: every batch the change set meant to apply is
        now in the row's applied list. The MERGE updates a row only if it still holds the list
        the change was folded from, so a row another run changed in between (a concurrent run
        committing after this run computed its changes) is left as it is: no batch is ever
        applied twice. With attempt (the strategy's attempt number) and attempts left, such
        rows make the strategy plan again, as a rerun would, and this returns what happened
        ('' when nothing is missing); on the last attempt (or without one: an audit stage)
        the run is refused, and the scheduler's rerun applies the batches still missing.
    -#}
    {%- set applied = adapter.quote_column(cfg.applied_column) -%}
    {%- set check_sql -%}
        select count(*) as n
        from {{ changes }} as source
        left join {{ target }} as target
            on {{ idempotent_merge_key_match(cfg.unique_key, 'target', 'source') }}
        where
            source.dbt_im_op in ('insert', 'update')
            and (
                target.{{ applied }} is null
                or size(array_except(source.{{ applied }}, target.{{ applied }})) > 0
            )
    {%- endset -%}
    {%- set missing = run_query(check_sql).rows[0]['n'] -%}
    {%- if missing > 0 and attempt is not none and attempt < adapter.merge_attempts() -%}
        {{ return(adapter.met_concurrent_commit(target | string, attempt, missing ~ ' key(s) changed by another run under the MERGE')) }}
    {%- elif missing > 0 -%}
        {%- do run_query('drop view if exists ' ~ changes) -%}
        {%- set problem -%}
            {{ missing }} key(s) of {{ target }} were changed by another run between this run's
            change set and its MERGE, so their pending batches were not applied by this run
            (none was applied twice). The other keys were committed.
        {%- endset -%}
        {%- set fix = 'Rerun the interval: it applies exactly the batches still missing.' -%}
        {%- do idempotent_merge_raise('the MERGE left batches unapplied:', [problem], fix=fix) -%}
    {%- endif -%}
    {{ return('') }}
{% endmacro %}
