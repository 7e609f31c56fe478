{% macro idempotent_merge_assert_deterministic(setting, expressions) %}
    {#-
        Refuse, at compile time, a key or merge condition that calls a non-deterministic
        function: a retry would compute other keys and insert its rows a second time.
        setting names the config the expressions come from (for the message).
    -#}
    {%- set pattern = '(?i)\\b(rand|randn|random|uuid|shuffle|now|current_timestamp|current_date|current_time|localtimestamp|curdate|unix_timestamp|monotonically_increasing_id|spark_partition_id|input_file_name|input_file_block_start|input_file_block_length)\\s*\\(' -%}
    {%- for expression in expressions -%}
        {%- set found = modules.re.search(pattern, expression | string) -%}
        {%- if found -%}
            {% set msg %}
Model {{ model.unique_id }}: {{ setting }} uses the non-deterministic function {{ found.group(1) | lower }}() in {{ (expression | string) | tojson }}.
A retry would evaluate it again, match no existing row and insert duplicates. Use stable columns (a natural or composite business key) or deterministic functions such as lower(), coalesce() or sha2().
            {% endset %}
            {{ exceptions.raise_compiler_error(msg) }}
        {%- endif -%}
    {%- endfor -%}
{% endmacro %}
