{#- Private: the package's one way to fail. -#}

{% macro _mj_fail(message) -%}
  {#- Every error of the package names the model (or test) it comes from. -#}
  {%- set node = "'" ~ (model.name if model is defined and model.name is defined else 'unknown') ~ "'" -%}
  {%- if model is defined and dbt_multijoin._mj_in_unit_test() -%}
    {%- set node = "'" ~ dbt_multijoin._mj_tested_model_name() ~ "' (unit test '" ~ model.name ~ "')" -%}
  {%- endif -%}
  {{ exceptions.raise_compiler_error("dbt_multijoin: model " ~ node ~ ": " ~ message) }}
{%- endmacro %}
