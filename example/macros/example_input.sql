{% macro example_input(n) -%}
{#- Input n of 8: 1,000,000 rows, one per key. Keys start at (n - 1) * 125,000 and step by 1
    (odd n) or 2 (even n), so the inputs overlap partially: a key is in 1 to 8 of them. Three
    value columns, named after the input so the wide table needs no prefixes. -#}
{%- set offset = (n - 1) * 125000 -%}
{%- set stride = 1 if n % 2 == 1 else 2 -%}
select
    id * {{ stride }} + {{ offset }} as device_id,
    cast(id % {{ 50 + n }} as int) as events_{{ n }},
    cast((id * {{ n }}) % 100000 as double) / 100 as amount_{{ n }},
    concat('tier_', cast(id % {{ 3 + n }} as string)) as tier_{{ n }}
from range(1000000)
{%- endmacro %}
