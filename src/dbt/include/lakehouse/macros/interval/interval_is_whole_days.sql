{% macro interval_is_whole_days() %}
    {#- True when both bounds of interval_bounds() fall on midnight UTC (a DATE column can be reconciled). -#}
    {%- set b = interval_bounds() -%}
    {{ return(b is none or b.whole_days) }}
{% endmacro %}
