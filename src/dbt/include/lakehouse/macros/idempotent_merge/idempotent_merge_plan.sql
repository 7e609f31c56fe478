{#-
    idempotent_merge, stage 1: the plan. What the strategy settles before anything is written:
    the interval, a --full-refresh that would shrink the history, every config of the model read
    and checked once against its columns (idempotent_merge_config, in a file of its own), and
    whether write-audit-publish stages the change (idempotent_merge_audit_plan, macros/audit).
-#}

{% macro idempotent_merge_plan(existing, rebuild) %}
    {#-
        What idempotent_merge can settle before anything is written, not even the staging
        relation: the interval (parsed once), a --full-refresh that would shrink the history
        (idempotent_merge_full_refresh_check), and, when the model merges into an existing
        table, every config checked against the table's columns (one error listing every
        problem). Returns {'bounds', 'table' (its columns, or none), 'cfg' (or none until the
        model's columns are known, on a first load), 'rebuild' (--full-refresh or a view: the
        CREATE may replace), 'audit' (idempotent_merge_audit_plan: publish now, or stage for
        audit)}; idempotent_merge_run takes it from there.
    -#}
    {%- set microbatch = config.get('incremental_strategy') == 'microbatch' -%}
    {%- set bounds = interval_bounds() if interval_given() or microbatch or config.get('interval_column') else none -%}
    {%- set plan = {'bounds': bounds, 'table': none, 'cfg': none, 'rebuild': rebuild, 'audit': idempotent_merge_audit_plan(rebuild)} -%}
    {%- if existing is not none and rebuild -%}
        {%- do idempotent_merge_full_refresh_check(existing, bounds) -%}
    {%- elif existing is not none -%}
        {%- set table = idempotent_merge_columns(existing) -%}
        {%- set applied = idempotent_merge_applied_column() -%}
        {%- set problems = [] -%}
        {%- if applied and applied not in (table.names | map('lower') | list) -%}
            {%- set problem -%}
                {{ existing }} has no {{ applied }} column, so it cannot tell which batches were
                applied to each row (it was built before idempotent_merge recorded them).
                Rebuild it once over its whole history: set the model's begin config to its
                first day and run it with --full-refresh over [begin, end).
            {%- endset -%}
            {%- do problems.append(problem) -%}
        {%- endif -%}
        {%- set model_columns = table.names | reject('equalto', applied) | list -%}
        {%- do plan.update({
            'table': table,
            'cfg': idempotent_merge_config(model_columns, table.types, bounds, problems),
        }) -%}
    {%- endif -%}
    {{ return(plan) }}
{% endmacro %}

{% macro idempotent_merge_full_refresh_check(existing, bounds) %}
    {#-
        A --full-refresh replaces the whole table with what the model returns for the requested
        interval (bounds, or none when the run has no interval). For a model run on an
        interval that is its whole history only when the interval starts at the model's begin
        config (its first day); otherwise every row of the other intervals would be dropped
        and older versions could come back. Refused before anything is written, saying how to
        rebuild. A model run without the interval vars reads its whole source, and is rebuilt
        from it as usual.
    -#}
    {%- if bounds is none -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set raw_begin = config.get('begin') -%}
    {%- set begin = adapter.parse_instant(raw_begin) if raw_begin is not none else none -%}
    {%- if begin is not none and bounds.start <= begin -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set problem -%}
        {%- if raw_begin is none -%}
            the model has no begin config (the first day of its history). Set it, e.g.
            begin: '2026-10-03' in the model's config, then rebuild over [begin, end).
        {%- elif begin is none -%}
            its begin config {{ '"' ~ (raw_begin | string) ~ '"' }} is not an ISO-8601 date or
            timestamp. Fix it, then rebuild over [begin, end).
        {%- else -%}
            a full refresh must start at the model's begin ({{ begin.isoformat() }}) to rebuild
            the whole history.
        {%- endif -%}
    {%- endset -%}
    {%- set example_begin = begin.strftime('%Y-%m-%d') if begin is not none else '<first day>' -%}
    {%- set example_end = bounds.end.strftime('%Y-%m-%d') if bounds.whole_days else bounds.end.strftime('%Y-%m-%dT%H:%M:%S') -%}
    {%- set headline -%}
        --full-refresh would rebuild {{ existing }} from the interval
        [{{ bounds.start.isoformat() }}, {{ bounds.end.isoformat() }}) only, dropping the rows
        every other interval loaded. Nothing was written, because
    {%- endset -%}
    {%- set fix -%}
Rebuild the whole history:
  dbt run --select +{{ model.name }} --full-refresh --event-time-start {{ example_begin }} --event-time-end {{ example_end }}
To reload one interval, run it again without --full-refresh: that is always safe.
    {%- endset -%}
    {%- do idempotent_merge_raise(headline.split() | join(' '), [problem], fix=fix) -%}
{% endmacro %}

{% macro idempotent_merge_columns(relation) %}
    {#-
        The relation's columns, read once: {'names': [name, ...], 'types': {lower-cased name:
        Spark type}, 'columns': [dbt Column, ...]} (the Column objects feed the schema-change
        comparison).
    -#}
    {%- set columns = adapter.get_columns_in_relation(relation) -%}
    {%- set types = {} -%}
    {%- for col in columns -%}
        {%- do types.update({col.name | lower: col.dtype}) -%}
    {%- endfor -%}
    {{ return({'names': columns | map(attribute='name') | list, 'types': types, 'columns': columns}) }}
{% endmacro %}
