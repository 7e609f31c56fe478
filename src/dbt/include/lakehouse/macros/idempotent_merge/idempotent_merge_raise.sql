{#-
    The one way idempotent_merge (and microbatch) refuse a model: one compiler error listing
    every problem, after dropping a Python model's staging table.
-#}

{% macro idempotent_merge_raise(headline, problems, staging=none, fix=none, strategy='idempotent_merge') %}
    {#-
        The one way idempotent_merge refuses a model: when problems is not empty, one compiler
        error names the model and the strategy (microbatch for a microbatch model's own
        checks), says what happened (headline, e.g. "nothing was written, because"), lists
        every problem on a line of its own and, when given,
        ends with the fix. A Python model's staging table (staging) is dropped first, so a
        refused run leaves nothing behind. Each problem is built by the caller in a
        {% set %} block; its line breaks and indentation are folded into single spaces.
    -#}
    {%- if problems -%}
        {%- if staging is not none -%}
            {%- do idempotent_merge_drop_staging(staging) -%}
        {%- endif -%}
        {% set msg %}
Model {{ model.unique_id }} (incremental_strategy='{{ strategy }}'): {{ headline }}
{%- for problem in problems %}
  - {{ problem.split() | join(' ') }}
{%- endfor %}
{%- if fix %}
{{ fix }}
{%- endif %}
        {% endset %}
        {{ exceptions.raise_compiler_error(msg) }}
    {%- endif -%}
{% endmacro %}

{% macro idempotent_merge_drop_staging(source) %}
    {#-
        Drop a Python model's staging table (<model>__dbt_tmp) before a refusal, so a refused
        run leaves nothing behind. A SQL model stages a temporary view (no schema), which ends
        with the session and is left alone.
    -#}
    {%- if source.schema -%}
        {%- do lakehouse_drop_table(source) -%}
    {%- endif -%}
{% endmacro %}
