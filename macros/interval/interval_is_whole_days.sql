{% macro interval_is_whole_days() %}
    {#- True when both bounds of interval_bounds() fall on midnight UTC (a DATE column can be reconciled). -#}
    {%- set b = interval_bounds() -%}
    {%- for value in [b.start, b.end] -%}
        {%- if value.hour or value.minute or value.second or value.microsecond -%}
            {{ return(false) }}
        {%- endif -%}
    {%- endfor -%}
    {{ return(true) }}
{% endmacro %}
