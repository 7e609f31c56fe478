{% macro idempotent_merge_check_source(cfg, source, target) %}
    {#-
        Inspect the model's new rows (source) before anything is written and refuse what would
        make the merge wrong. target is the existing table, or none on the first run.
        Refused, each with the offending values and the fix:
          - a NULL in a key column (unless allow_null_keys), or a NULL version / batch id;
          - rows outside the requested interval when interval_column is set;
          - two rows of one key with the same version (or batch; without either, any two
            different rows of one key) carrying different values, unless tie_break_column
            orders them;
          - an empty source while the target holds rows in the interval that
            delete_missing_in_interval would delete (unless allow_empty_interval).
        One aggregate query (a single pass over the source) counts rows, keys, (key, batch)
        pairs, NULLs, rows outside the interval, and the distinct rows against the distinct
        (key, guard) pairs: conflicting rows exist exactly when there are more of the first.
        Only then a second query fetches examples for the message; the table is read only
        when the source is empty.
        Returns {'source_rows': n, 'source_keys': n, 'source_units': n}: units are the keys, or
        for batch_column the distinct (key, batch) pairs.
    -#}
    {%- set keys = cfg.unique_key -%}
    {%- set guard = cfg.guard -%}
    {%- set tie_columns = keys + ([guard] if guard else []) + ([cfg.tie_break_column] if cfg.tie_break_column else []) -%}
    {%- set null_key = [] -%}
    {%- for k in keys -%}{%- do null_key.append(k ~ ' is null') -%}{%- endfor -%}
    {%- set in_scope = in_interval(cfg.interval_column, cfg.interval_type, cfg.bounds) if cfg.interval_column else none -%}
    {%- set profile_sql -%}
        select
            count(*) as source_rows,
            count(distinct struct({{ keys | join(', ') }})) as source_keys,
            count(distinct struct({{ tie_columns | join(', ') }})) as source_units,
            count(distinct struct({{ cfg.columns | join(', ') }})) as distinct_rows,
            count_if({{ null_key | join(' or ') }}) as null_key_rows,
            {{ 'count_if(' ~ guard ~ ' is null)' if guard else '0' }} as null_guard_rows,
            {{ 'count_if(not coalesce(' ~ in_scope ~ ', false))' if in_scope else '0' }} as outside_rows,
            {{ 'cast(min(' ~ cfg.interval_column ~ ') as string)' if in_scope else "''" }} as min_interval_value,
            {{ 'cast(max(' ~ cfg.interval_column ~ ') as string)' if in_scope else "''" }} as max_interval_value
        from {{ source }}
    {%- endset -%}
    {%- set p = run_query(profile_sql).rows[0] -%}
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
    {%- if p['outside_rows'] > 0 -%}
        {%- set problem -%}
            {{ p['outside_rows'] }} source row(s) have {{ cfg.interval_column }} outside the
            requested interval [{{ cfg.bounds.start.isoformat() }}, {{ cfg.bounds.end.isoformat() }})
            (values from {{ p['min_interval_value'] }} to {{ p['max_interval_value'] }}). Filter
            the model with {{ "{{ in_interval('" ~ cfg.interval_column ~ "', '" ~ cfg.interval_type ~ "') }}" }}.
        {%- endset -%}
        {%- do problems.append(problem) -%}
    {%- endif -%}
    {%- if not problems and p['distinct_rows'] > p['source_units'] -%}
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
        'source_units': p['source_units'] if cfg.batch_column else p['source_keys'],
    }) }}
{% endmacro %}
