{% macro idempotent_merge_key_match(keys, left, right) %}
    {#-
        Null-safe equality of every key column between two aliases: left.k <=> right.k and ...
        A key with a NULL part then matches its own earlier row instead of being inserted again.
    -#}
    {%- set parts = [] -%}
    {%- for k in keys -%}
        {%- do parts.append(left ~ '.' ~ k ~ ' <=> ' ~ right ~ '.' ~ k) -%}
    {%- endfor -%}
    {{- return(parts | join(' and ')) -}}
{% endmacro %}
