{% macro idempotent_merge_conflicts(cfg, source, tie_columns) %}
    {#-
        The problem text for source rows that share a key and guard (version or batch; the
        key alone without either) but differ in other values, with up to five examples. Run
        only when idempotent_merge_check_source counted such rows.
    -#}
    {%- set examples_sql -%}
        select {{ tie_columns | join(', ') }}, count(*) as variants
        from (select distinct {{ cfg.columns | join(', ') }} from {{ source }}) as distinct_rows
        group by {{ tie_columns | join(', ') }}
        having count(*) > 1
        order by {{ tie_columns | join(', ') }}
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
