{% macro idempotent_merge_check_source(cfg, source, target) %}
    {#-
        Inspect the model's new rows (source) before anything is written and refuse what would
        make the merge wrong. target is the existing table, or none on the first run.
        Refused, each with the offending values and the fix:
          - a NULL in a key column (unless allow_null_keys), or a NULL version / batch id;
          - rows outside the requested interval when interval_column is set;
          - two rows of one key with the same version (or, without version_column, any two
            different rows of one key) carrying different values, unless tie_break_column
            orders them;
          - an empty source while the target holds rows in the interval that
            delete_missing_in_interval would delete (unless allow_empty_interval).
        One aggregate query (a single pass over the source) counts rows, keys, NULLs and rows
        outside the interval. Rows of one key can only conflict when there are more rows than
        keys, so the query that looks for them runs only then; the table is read only when
        the source is empty.
        Returns {'source_rows': n, 'source_keys': n, 'source_units': n}: units are the keys, or
        for batch_column the distinct (key, batch) pairs.
    -#}
    {%- set keys = cfg.unique_key -%}
    {%- set guard = cfg.version_column or cfg.batch_column -%}
    {%- set null_key = [] -%}
    {%- for k in keys -%}{%- do null_key.append(k ~ ' is null') -%}{%- endfor -%}
    {%- set profile_sql -%}
        select
            count(*) as source_rows,
            count(distinct struct({{ keys | join(', ') }})) as source_keys,
            {{ 'count(distinct struct(' ~ (keys | join(', ')) ~ ', ' ~ cfg.batch_column ~ '))' if cfg.batch_column else 'null' }} as source_batches,
            count_if({{ null_key | join(' or ') }}) as null_key_rows,
            {{ 'count_if(' ~ guard ~ ' is null)' if guard else '0' }} as null_guard_rows,
            {{ 'count_if(not coalesce(' ~ in_interval(cfg.interval_column, cfg.interval_type) ~ ', false))' if cfg.interval_column else '0' }} as outside_rows,
            {{ 'cast(min(' ~ cfg.interval_column ~ ') as string)' if cfg.interval_column else "''" }} as min_interval_value,
            {{ 'cast(max(' ~ cfg.interval_column ~ ') as string)' if cfg.interval_column else "''" }} as max_interval_value
        from {{ source }}
    {%- endset -%}
    {%- set p = run_query(profile_sql).rows[0] -%}
    {%- set problems = [] -%}
    {%- if p['null_key_rows'] > 0 and not cfg.allow_null_keys -%}
        {%- do problems.append(p['null_key_rows'] ~ " source row(s) have a NULL in the key (" ~ (keys | join(', ')) ~ "). Fill the key in the model (e.g. coalesce), filter those rows out, or set allow_null_keys: true to match NULL key parts null-safely.") -%}
    {%- endif -%}
    {%- if p['null_guard_rows'] > 0 -%}
        {%- do problems.append(p['null_guard_rows'] ~ " source row(s) have a NULL " ~ guard ~ ", so they cannot be ordered against the table's rows. Give every row a " ~ guard ~ ".") -%}
    {%- endif -%}
    {%- if p['outside_rows'] > 0 -%}
        {%- do problems.append(p['outside_rows'] ~ " source row(s) have " ~ cfg.interval_column ~ " outside the requested interval [" ~ interval_bounds()['start'].isoformat() ~ ", " ~ interval_bounds()['end'].isoformat() ~ ") (values from " ~ p['min_interval_value'] ~ " to " ~ p['max_interval_value'] ~ "). Filter the model with {{ in_interval('" ~ cfg.interval_column ~ "', '" ~ cfg.interval_type ~ "') }}.") -%}
    {%- endif -%}
    {#- conflicting rows need two rows of one key: with one row per key there are none to look for -#}
    {%- if not problems and p['source_rows'] > p['source_keys'] -%}
        {%- set tie_columns = keys + ([guard] if guard else []) + ([cfg.tie_break_column] if cfg.tie_break_column else []) -%}
        {%- set tie_sql -%}
            select {{ tie_columns | join(', ') }}, count(*) as variants
            from (select distinct {{ cfg.columns | join(', ') }} from {{ source }}) as distinct_rows
            group by {{ tie_columns | join(', ') }}
            having count(*) > 1
            order by {{ tie_columns | join(', ') }}
            limit 5
        {%- endset -%}
        {%- set ties = run_query(tie_sql) -%}
        {%- if ties.rows | length > 0 -%}
            {%- set shown = [] -%}
            {%- for row in ties.rows -%}
                {%- set parts = [] -%}
                {%- for c in tie_columns -%}{%- do parts.append(c ~ '=' ~ row[c]) -%}{%- endfor -%}
                {%- do shown.append('(' ~ (parts | join(', ')) ~ ': ' ~ row['variants'] ~ ' different rows)') -%}
            {%- endfor -%}
            {%- if cfg.batch_column -%}
                {%- do problems.append("several source rows share a key and " ~ guard ~ " but differ in other columns: " ~ (shown | join('; ')) ~ ". A batch applies one row per key. Fix the input, or sum the batch's rows per key in the model.") -%}
            {%- elif guard -%}
                {%- do problems.append("several source rows share a key and " ~ guard ~ " but differ in other columns, so none of them is the newest: " ~ (shown | join('; ')) ~ ". Fix the input, or set tie_break_column to a column that orders such rows deterministically.") -%}
            {%- else -%}
                {%- do problems.append("several different source rows share a key and there is no version_column to pick the newest: " ~ (shown | join('; ')) ~ ". Set version_column (e.g. updated_at), or make the model return one row per key.") -%}
            {%- endif -%}
        {%- endif -%}
    {%- endif -%}
    {%- if not problems and p['source_rows'] == 0 and cfg.delete_missing and target is not none and not cfg.allow_empty_interval -%}
        {%- set at_risk = run_query('select count(*) as n from ' ~ target ~ ' where ' ~ in_interval(cfg.interval_column, cfg.interval_type)).rows[0]['n'] -%}
        {%- if at_risk > 0 -%}
            {%- do problems.append("the source is empty for [" ~ interval_bounds()['start'].isoformat() ~ ", " ~ interval_bounds()['end'].isoformat() ~ ") but the table holds " ~ at_risk ~ " row(s) there, which delete_missing_in_interval would delete. A late or missing upstream file must not wipe the interval: load the input first, or set allow_empty_interval: true if the interval really is empty now.") -%}
        {%- endif -%}
    {%- endif -%}
    {%- if problems -%}
        {%- do idempotent_merge_drop_staging(source) -%}
        {% set msg %}
Model {{ cfg.model }} (incremental_strategy='idempotent_merge'): nothing was written, because
{%- for e in problems %}
  - {{ e }}
{%- endfor %}
        {% endset %}
        {{ exceptions.raise_compiler_error(msg) }}
    {%- endif -%}
    {#- units: what one application covers, a key (or, for batch_column, a key's batch) -#}
    {{ return({
        'source_rows': p['source_rows'],
        'source_keys': p['source_keys'],
        'source_units': p['source_batches'] if cfg.batch_column else p['source_keys'],
    }) }}
{% endmacro %}
